/**
 * `--templateFile`: a bootstrap written as a Go `text/template` (users bring the templates they run today),
 * rendered with the data below and parsed as JSON; `MESH_BOOTSTRAP_OVERRIDE` and the schema check follow as for
 * the built-in bootstrap.
 *
 * The data, as templates read it. The names marked "Istio" are the ones Istio 1.9's bootstrap template
 * reads, so that template renders here and passes the schema check; only its hard-coded socket paths
 * (`./etc/istio/proxy/XDS` and `SDS`) need pointing at `{{ .xds_socket }}` and `{{ .sds_socket }}`.
 * Options Istio leaves out when unset (`.zipkin`, `.region`, `.sts_port`, …) are left out here too, so the
 * `{{ if }}`s around them skip. Newer Istio templates read options added after 1.9; adapt those lines.
 *
 * | field | value |
 * | --- | --- |
 * | `.ID`, `.nodeID` (Istio) | the node id, `sidecar~10.1.2.3~pod.ns~ns.svc.cluster.local` |
 * | `.nodeType` (Istio) | `sidecar` or `router`, the node id's first part |
 * | `.cluster` (Istio) | the service cluster (`--serviceCluster`) |
 * | `.meta` | the node metadata (object) |
 * | `.meta_json_str` (Istio) | the node metadata as JSON text |
 * | `.labels` | the workload's labels |
 * | `.config` (Istio) | the resolved ProxyConfig by Istio's Go field names (below) and ours (`.proxyAdminPort`) |
 * | `.discovery_address` (Istio) | where the proxy's ADS would go without the agent |
 * | `.proxy_via_agent` (Istio) | `PROXY_XDS_VIA_AGENT`: true when the proxy's xDS goes through the agent's socket |
 * | `.pilot_grpc_address`, `.discovery_host`, `.pilot_SAN` (Istio) | the discovery server as `{"address", "port_value"}` JSON, its host, and its certificate's name as a JSON list of matchers |
 * | `.provisioned_cert` (Istio) | the PEM file of the roots the discovery server's certificate chains to |
 * | `.call_credentials` (Istio) | `CALL_CREDENTIALS`; `.sts_port` (Istio) is `--stsPort` when set |
 * | `.xds_type` (Istio) | `GRPC` |
 * | `.runtime_flags` (Istio) | `{}`: the agent sets no runtime flags |
 * | `.xds_socket`, `.sds_socket` | the agent's xDS and SDS Unix sockets |
 * | `.admin_port`, `.stats_port`, `.readiness_port`, `.status_port` | 15000, 15090, 15021, 15020 by default |
 * | `.envoy_prometheus_port`, `.envoy_status_port` (Istio) | the stats and readiness ports again |
 * | `.localhost`, `.wildcard`, `.dns_lookup_family` (Istio) | `127.0.0.1`, `0.0.0.0`, `V4_ONLY` |
 *
 * `.config`'s Go names: `.ConfigPath`, `.BinaryPath`, `.ServiceCluster`, `.DiscoveryAddress`,
 * `.ProxyAdminPort`, `.StatusPort`; `.DrainDuration`, `.ParentShutdownDuration`, `.TerminationDrainDuration`
 * as Go prints durations (`45s`, `1m0s`); `.ControlPlaneAuthPolicy` as Istio's enum number, 1 for MUTUAL_TLS
 * and 0 for NONE.
 *
 * @module
 */
import { formatDuration, msToDuration } from "@mesh/shared/flags/duration";
import type { Json } from "./bootstrap.ts";
import { parseGoTemplate } from "@mesh/shared/template/go_template";
import type { ProxyConfig } from "./proxy_config.ts";
import type { ProxyNode } from "./proxy_node.ts";
import { splitHostPort } from "@mesh/shared/net/host_port";

/** What a bootstrap template is rendered with. */
export interface BootstrapTemplateInputs {
  readonly node: ProxyNode;
  readonly labels: Readonly<Record<string, string>>;
  readonly config: ProxyConfig;
  readonly discoveryAddress: string;
  readonly xdsSocket: string;
  readonly sdsSocket: string;
  readonly adminPort: number;
  readonly statsPort: number;
  readonly readinessPort: number;
  readonly statusPort: number;
  /** `PROXY_XDS_VIA_AGENT`; default true. */
  readonly viaAgent?: boolean;
  /** The roots of the discovery server's certificate, a PEM file. */
  readonly xdsRootCertPath?: string;
  /** The name the discovery server's certificate carries. */
  readonly discoveryServerName?: string;
  /** `CALL_CREDENTIALS`. */
  readonly callCredentials?: boolean;
  /** `--stsPort`; 0 or absent: left out. */
  readonly stsPort?: number;
}

/** ProxyConfig as Istio's templates see it: the fields of its Go struct, by their Go names. */
function istioProxyConfig(config: ProxyConfig, serviceCluster: string): Record<string, unknown> {
  const duration = (ms: number) => formatDuration(msToDuration(ms));
  return {
    ConfigPath: config.configPath,
    BinaryPath: config.binaryPath,
    ServiceCluster: serviceCluster,
    DiscoveryAddress: config.discoveryAddress,
    ProxyAdminPort: config.proxyAdminPort,
    StatusPort: config.statusPort,
    DrainDuration: duration(config.drainDurationMs),
    ParentShutdownDuration: duration(config.parentShutdownDurationMs),
    TerminationDrainDuration: duration(config.terminationDrainDurationMs),
    // Istio's AuthenticationPolicy enum, which its templates compare as a number:
    // `eq .config.ControlPlaneAuthPolicy 1`.
    ControlPlaneAuthPolicy: config.controlPlaneAuthPolicy === "MUTUAL_TLS" ? 1 : 0,
  };
}

/** The template data of the table above. */
export function bootstrapTemplateData(inputs: BootstrapTemplateInputs): Record<string, unknown> {
  return {
    ID: inputs.node.id,
    nodeID: inputs.node.id,
    // Istio derives the type from the node id the same way.
    nodeType: inputs.node.id.split("~")[0],
    cluster: inputs.node.cluster,
    meta: inputs.node.metadata,
    meta_json_str: JSON.stringify(inputs.node.metadata),
    labels: inputs.labels,
    config: { ...inputs.config, ...istioProxyConfig(inputs.config, inputs.node.cluster) },
    discovery_address: inputs.discoveryAddress,
    proxy_via_agent: inputs.viaAgent ?? true,
    pilot_grpc_address: `{"address": "${splitHostPort(inputs.discoveryAddress).host}", "port_value": ${
      splitHostPort(inputs.discoveryAddress).port
    }}`,
    discovery_host: splitHostPort(inputs.discoveryAddress).host,
    pilot_SAN: JSON.stringify(inputs.discoveryServerName ? [{ exact: inputs.discoveryServerName }] : []),
    provisioned_cert: inputs.xdsRootCertPath ?? "",
    call_credentials: inputs.callCredentials ?? false,
    ...(inputs.stsPort ? { sts_port: inputs.stsPort } : {}),
    xds_type: "GRPC",
    runtime_flags: "{}",
    xds_socket: inputs.xdsSocket,
    sds_socket: inputs.sdsSocket,
    admin_port: inputs.adminPort,
    stats_port: inputs.statsPort,
    readiness_port: inputs.readinessPort,
    status_port: inputs.statusPort,
    envoy_prometheus_port: inputs.statsPort,
    envoy_status_port: inputs.readinessPort,
    localhost: "127.0.0.1",
    wildcard: "0.0.0.0",
    dns_lookup_family: "V4_ONLY",
  };
}

/**
 * Reads and renders the template at `path` and parses the result as JSON.
 *
 * @throws {Error} naming `setting` (`--templateFile` or `MESH_BOOTSTRAP`) and the path when it cannot be read
 * @throws {TemplateError} naming the file and line of a template problem
 * @throws {SyntaxError} naming the file when the rendered text is not JSON
 */
export function renderBootstrapTemplate(
  path: string,
  data: Record<string, unknown>,
  setting = "--templateFile",
): Json {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (error) {
    throw new Error(`Cannot read ${setting} "${path}": ${(error as Error).message}`, { cause: error });
  }
  const rendered = parseGoTemplate(path, text)(data);
  try {
    return JSON.parse(rendered) as Json;
  } catch (error) {
    throw new SyntaxError(
      `${setting} ${path} rendered text that is not JSON (${(error as Error).message}); ` +
        "check the template's quoting and commas",
      { cause: error },
    );
  }
}
