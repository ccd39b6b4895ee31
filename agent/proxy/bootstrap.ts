/**
 * The proxy's bootstrap: admin on 127.0.0.1:15000; ADS through the cluster `xds-grpc` on the agent's XDS socket;
 * SDS through `sds-grpc` on its SDS socket; a listener on 15090 for `/stats/prometheus` and one on 15021 for
 * `/healthz/ready`, routed to the agent's status port. `MESH_BOOTSTRAP_OVERRIDE` (a JSON or YAML file) is merged
 * over it. Checked against Envoy's Bootstrap schema and validation rules before it is written.
 *
 * As the reference's template: with `PROXY_XDS_VIA_AGENT=false`, `xds-grpc` goes to the discovery server
 * itself (by DNS, over TLS with the workload certificate from SDS when the control plane policy is
 * MUTUAL_TLS); with `CALL_CREDENTIALS=true`, ADS is a gRPC client of the discovery server authenticated per
 * call with a token the agent's STS exchanges for the workload's, and there is no `xds-grpc` cluster.
 *
 * @module
 */
import { parse as parseYaml } from "yaml";
import { encodeAny, messageTypeForUrl } from "@mesh/proto/any_codec";
import type protobuf from "protobufjs";
import { ENVOY_PROTO_FILES, loadProtoFiles } from "@mesh/proto/envoy_schema";
import { fromProtoJson } from "@mesh/proto/proto_json";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { typeUrlOf } from "@mesh/proto/type_urls";
import type { ProxyNode } from "./proxy_node.ts";
import type { BootstrapTelemetry } from "./bootstrap_telemetry.ts";
import { splitHostPort } from "@mesh/shared/net/host_port";

/** The type URL of Envoy's bootstrap. */
export const BOOTSTRAP_TYPE_URL = typeUrlOf("envoy.config.bootstrap.v3.Bootstrap");

/** Where the bootstrap points the proxy. */
export interface BootstrapInputs {
  readonly node: ProxyNode;
  /** The agent's XDS socket path. */
  readonly xdsSocket: string;
  /** The agent's SDS socket path. */
  readonly sdsSocket: string;
  /** The agent's status port (15020). */
  readonly statusPort: number;
  /** The proxy's admin port (15000). */
  readonly adminPort: number;
  /** The Prometheus listener port (15090). */
  readonly statsPort: number;
  /** The readiness listener port (15021). */
  readonly readinessPort: number;
  /** The tracer, access log service and outlier log (`bootstrapTelemetry`); absent: none. */
  readonly telemetry?: BootstrapTelemetry;
  /** How ADS reaches the discovery server when not through the agent's socket; absent: the socket. */
  readonly xds?: DirectXds;
}

/** ADS straight to the discovery server (`PROXY_XDS_VIA_AGENT=false` or `CALL_CREDENTIALS=true`). */
export interface DirectXds {
  /** `host:port` of the discovery server. */
  readonly address: string;
  /** TLS with the workload certificate (MUTUAL_TLS); false: plaintext. */
  readonly mutualTls: boolean;
  /** The PEM file of the roots the discovery server's certificate must chain to. */
  readonly rootCertPath: string;
  /** The name the discovery server's certificate must carry. */
  readonly serverName: string;
  /** With `CALL_CREDENTIALS`: the agent's STS port and the workload token the proxy exchanges there. */
  readonly callCredentials?: { readonly stsPort: number; readonly tokenPath: string };
}

/** `xds-grpc` to the discovery server by DNS, as the reference's template writes it without the agent. */
function directXdsCluster(xds: DirectXds): Json {
  const { host, port } = splitHostPort(xds.address);
  return {
    name: "xds-grpc",
    type: "STRICT_DNS",
    respect_dns_ttl: true,
    dns_lookup_family: "V4_ONLY",
    connect_timeout: { seconds: "1" },
    typed_extension_protocol_options: {
      "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
        "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
        explicit_http_config: { http2_protocol_options: {} },
      },
    },
    ...(xds.mutualTls
      ? {
        transport_socket: {
          name: "envoy.transport_sockets.tls",
          typed_config: {
            "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
            sni: xds.serverName,
            common_tls_context: {
              alpn_protocols: ["h2"],
              tls_certificate_sds_secret_configs: [{
                name: "default",
                sds_config: {
                  resource_api_version: "V3",
                  initial_fetch_timeout: "0s",
                  api_config_source: {
                    api_type: "GRPC",
                    transport_api_version: "V3",
                    grpc_services: [{ envoy_grpc: { cluster_name: "sds-grpc" } }],
                  },
                },
              }],
              validation_context: {
                trusted_ca: { filename: xds.rootCertPath },
                match_subject_alt_names: [{ exact: xds.serverName }],
              },
            },
          },
        },
      }
      : {}),
    load_assignment: {
      cluster_name: "xds-grpc",
      endpoints: [{
        lb_endpoints: [{ endpoint: { address: { socket_address: { address: host, port_value: port } } } }],
      }],
    },
  };
}

/** ADS as a gRPC client of the discovery server with STS call credentials (`CALL_CREDENTIALS`). */
function callCredentialsService(xds: DirectXds, sts: { stsPort: number; tokenPath: string }): Json {
  return {
    google_grpc: {
      target_uri: xds.address,
      stat_prefix: "googlegrpcxds",
      channel_credentials: { ssl_credentials: { root_certs: { filename: xds.rootCertPath } } },
      call_credentials: [{
        sts_service: {
          token_exchange_service_uri: `http://localhost:${sts.stsPort}/token`,
          subject_token_path: sts.tokenPath,
          subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
        },
      }],
      channel_args: {
        args: {
          "grpc.http2.max_pings_without_data": { int_value: "0" },
          "grpc.keepalive_time_ms": { int_value: "10000" },
          "grpc.keepalive_timeout_ms": { int_value: "20000" },
        },
      },
    },
  };
}

/** The invalid bootstrap, with Envoy's validation messages. */
export class BootstrapError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "BootstrapError";
  }
}

/** A JSON object. */
export type Json = Record<string, unknown>;

function udsCluster(name: string, path: string): Json {
  return {
    name,
    type: "STATIC",
    connect_timeout: { seconds: "1" },
    typed_extension_protocol_options: {
      "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
        "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
        explicit_http_config: { http2_protocol_options: {} },
      },
    },
    load_assignment: {
      cluster_name: name,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { pipe: { path } } } }] }],
    },
  };
}

function httpListener(name: string, port: number, routes: Json[]): Json {
  return {
    name,
    address: { socket_address: { address: "0.0.0.0", port_value: port } },
    filter_chains: [{
      filters: [{
        name: "envoy.filters.network.http_connection_manager",
        typed_config: {
          "@type":
            "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
          stat_prefix: name,
          route_config: { virtual_hosts: [{ name, domains: ["*"], routes }] },
          http_filters: [{
            name: "envoy.filters.http.router",
            typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" },
          }],
        },
      }],
    }],
  };
}

/** Our default bootstrap for `inputs`. */
export function defaultBootstrap(inputs: BootstrapInputs): Json {
  const { xds } = inputs;
  const sts = xds?.callCredentials;
  const xdsCluster = xds === undefined
    ? [udsCluster("xds-grpc", inputs.xdsSocket)]
    : sts === undefined
    ? [directXdsCluster(xds)]
    : [];
  return {
    node: { id: inputs.node.id, cluster: inputs.node.cluster, metadata: inputs.node.metadata },
    admin: { address: { socket_address: { address: "127.0.0.1", port_value: inputs.adminPort } } },
    dynamic_resources: {
      ads_config: {
        api_type: "GRPC",
        transport_api_version: "V3",
        set_node_on_first_message_only: true,
        grpc_services: [
          xds !== undefined && sts !== undefined
            ? callCredentialsService(xds, sts)
            : { envoy_grpc: { cluster_name: "xds-grpc" } },
        ],
      },
      cds_config: { ads: {}, resource_api_version: "V3" },
      lds_config: { ads: {}, resource_api_version: "V3" },
    },
    static_resources: {
      clusters: [
        ...xdsCluster,
        udsCluster("sds-grpc", inputs.sdsSocket),
        {
          name: "prometheus_stats",
          type: "STATIC",
          connect_timeout: { seconds: "1" },
          load_assignment: {
            cluster_name: "prometheus_stats",
            endpoints: [{
              lb_endpoints: [{
                endpoint: {
                  address: { socket_address: { address: "127.0.0.1", port_value: inputs.adminPort } },
                },
              }],
            }],
          },
        },
        {
          name: "agent",
          type: "STATIC",
          connect_timeout: { seconds: "1" },
          load_assignment: {
            cluster_name: "agent",
            endpoints: [{
              lb_endpoints: [{
                endpoint: {
                  address: { socket_address: { address: "127.0.0.1", port_value: inputs.statusPort } },
                },
              }],
            }],
          },
        },
        ...(inputs.telemetry?.clusters ?? []),
      ],
      listeners: [
        httpListener("stats", inputs.statsPort, [{
          match: { prefix: "/stats/prometheus" },
          route: { cluster: "prometheus_stats" },
        }]),
        httpListener("readiness", inputs.readinessPort, [{
          match: { prefix: "/healthz/ready" },
          route: { cluster: "agent" },
        }]),
      ],
    },
    ...inputs.telemetry?.fields,
  };
}

/** Deep merge of `override` over `base`: objects merge key by key, anything else replaces. */
export function mergeOverride(base: unknown, override: unknown): unknown {
  if (
    base === null || override === null || typeof base !== "object" || typeof override !== "object" ||
    Array.isArray(base) || Array.isArray(override)
  ) {
    return override;
  }
  const out: Record<string, unknown> = { ...(base as Json) };
  for (const [key, value] of Object.entries(override as Json)) out[key] = mergeOverride(out[key], value);
  return out;
}

/** Parses an override file's text (JSON or YAML); `source` names it in errors. */
export function parseOverride(text: string, source: string): Json {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (cause) {
    throw new BootstrapError(`${source} is neither JSON nor YAML: ${(cause as Error).message}`, { cause });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new BootstrapError(`${source} must hold an object of bootstrap fields`);
  }
  return value as Json;
}

/**
 * Checks a bootstrap against Envoy's schema and validation rules. The schema is loaded for this check alone
 * (not the process-wide one): the agent needs it once at startup, and nothing may keep it resident after.
 *
 * @throws {BootstrapError} listing what is wrong
 */
export function validateBootstrap(
  bootstrap: Json,
  source: string,
  root: protobuf.Root = loadProtoFiles(ENVOY_PROTO_FILES),
): void {
  let bytes: Uint8Array;
  try {
    // Envoy reads the file as proto3 JSON ("1s" durations, bare wrapper values, plain-JSON Structs).
    const encodable = fromProtoJson(messageTypeForUrl(BOOTSTRAP_TYPE_URL, root), bootstrap, root);
    bytes = encodeAny(BOOTSTRAP_TYPE_URL, encodable as Json, root);
  } catch (cause) {
    throw new BootstrapError(`${source} does not fit Envoy's Bootstrap: ${(cause as Error).message}`, {
      cause,
    });
  }
  const violations = validatePgvAny(bytes, { root });
  if (violations.length > 0) {
    throw new BootstrapError(`${source} breaks Envoy's validation rules: ${formatPgvViolations(violations)}`);
  }
}
