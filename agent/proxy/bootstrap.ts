/**
 * The proxy's bootstrap: admin on 127.0.0.1:15000; ADS through the cluster `xds-grpc` on the agent's XDS socket;
 * SDS through `sds-grpc` on its SDS socket; a listener on 15090 for `/stats/prometheus` and one on 15021 for
 * `/healthz/ready`, routed to the agent's status port. `MESH_BOOTSTRAP_OVERRIDE` (a JSON or YAML file) is merged
 * over it. Checked against Envoy's Bootstrap schema and validation rules before it is written.
 *
 * @module
 */
import { parse as parseYaml } from "yaml";
import { encodeAny, messageTypeForUrl } from "../../proto/any_codec.ts";
import { loadEnvoySchema } from "../../proto/envoy_schema.ts";
import { fromProtoJson } from "../../proto/proto_json.ts";
import { formatPgvViolations, validatePgvAny } from "../../proto/pgv_validate.ts";
import { typeUrlOf } from "../../proto/type_urls.ts";
import type { ProxyNode } from "./proxy_node.ts";
import type { BootstrapTelemetry } from "./bootstrap_telemetry.ts";

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
  return {
    node: { id: inputs.node.id, cluster: inputs.node.cluster, metadata: inputs.node.metadata },
    admin: { address: { socket_address: { address: "127.0.0.1", port_value: inputs.adminPort } } },
    dynamic_resources: {
      ads_config: {
        api_type: "GRPC",
        transport_api_version: "V3",
        set_node_on_first_message_only: true,
        grpc_services: [{ envoy_grpc: { cluster_name: "xds-grpc" } }],
      },
      cds_config: { ads: {}, resource_api_version: "V3" },
      lds_config: { ads: {}, resource_api_version: "V3" },
    },
    static_resources: {
      clusters: [
        udsCluster("xds-grpc", inputs.xdsSocket),
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
 * Checks a bootstrap against Envoy's schema and validation rules.
 *
 * @throws {BootstrapError} listing what is wrong
 */
export function validateBootstrap(bootstrap: Json, source: string): void {
  let bytes: Uint8Array;
  try {
    // Envoy reads the file as proto3 JSON ("1s" durations, bare wrapper values, plain-JSON Structs).
    const root = loadEnvoySchema();
    const encodable = fromProtoJson(messageTypeForUrl(BOOTSTRAP_TYPE_URL, root), bootstrap, root);
    bytes = encodeAny(BOOTSTRAP_TYPE_URL, encodable as Json);
  } catch (cause) {
    throw new BootstrapError(`${source} does not fit Envoy's Bootstrap: ${(cause as Error).message}`, {
      cause,
    });
  }
  const violations = validatePgvAny(bytes);
  if (violations.length > 0) {
    throw new BootstrapError(`${source} breaks Envoy's validation rules: ${formatPgvViolations(violations)}`);
  }
}
