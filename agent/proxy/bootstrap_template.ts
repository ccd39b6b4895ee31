/**
 * `--templateFile`: a bootstrap written as a Go `text/template` (users bring the templates they run today),
 * rendered with the data below and parsed as JSON; `MESH_BOOTSTRAP_OVERRIDE` and the schema check follow as for
 * the built-in bootstrap.
 *
 * The data, as templates read it:
 *
 * | field | value |
 * | --- | --- |
 * | `.ID`, `.nodeID` | the node id, `sidecar~10.1.2.3~pod.ns~ns.svc.cluster.local` |
 * | `.cluster` | the service cluster (`--serviceCluster`) |
 * | `.meta` | the node metadata (object) |
 * | `.meta_json_str` | the node metadata as JSON text |
 * | `.labels` | the workload's labels |
 * | `.config` | the resolved ProxyConfig (`discoveryAddress`, `binaryPath`, `proxyAdminPort`, …) |
 * | `.discovery_address` | where the proxy's ADS would go without the agent |
 * | `.xds_socket`, `.sds_socket` | the agent's xDS and SDS Unix sockets |
 * | `.admin_port`, `.stats_port`, `.readiness_port`, `.status_port` | 15000, 15090, 15021, 15020 by default |
 * | `.localhost`, `.wildcard`, `.dns_lookup_family` | `127.0.0.1`, `0.0.0.0`, `V4_ONLY` |
 *
 * @module
 */
import type { Json } from "./bootstrap.ts";
import { parseGoTemplate } from "./go_template.ts";
import type { ProxyNode } from "./proxy_node.ts";

/** What a bootstrap template is rendered with. */
export interface BootstrapTemplateInputs {
  readonly node: ProxyNode;
  readonly labels: Readonly<Record<string, string>>;
  readonly config: Readonly<Record<string, unknown>>;
  readonly discoveryAddress: string;
  readonly xdsSocket: string;
  readonly sdsSocket: string;
  readonly adminPort: number;
  readonly statsPort: number;
  readonly readinessPort: number;
  readonly statusPort: number;
}

/** The template data of the table above. */
export function bootstrapTemplateData(inputs: BootstrapTemplateInputs): Record<string, unknown> {
  return {
    ID: inputs.node.id,
    nodeID: inputs.node.id,
    cluster: inputs.node.cluster,
    meta: inputs.node.metadata,
    meta_json_str: JSON.stringify(inputs.node.metadata),
    labels: inputs.labels,
    config: inputs.config,
    discovery_address: inputs.discoveryAddress,
    xds_socket: inputs.xdsSocket,
    sds_socket: inputs.sdsSocket,
    admin_port: inputs.adminPort,
    stats_port: inputs.statsPort,
    readiness_port: inputs.readinessPort,
    status_port: inputs.statusPort,
    localhost: "127.0.0.1",
    wildcard: "0.0.0.0",
    dns_lookup_family: "V4_ONLY",
  };
}

/**
 * Reads and renders the template at `path` and parses the result as JSON.
 *
 * @throws {Error} naming `--templateFile` and the path when it cannot be read
 * @throws {TemplateError} naming the file and line of a template problem
 * @throws {SyntaxError} naming the file when the rendered text is not JSON
 */
export function renderBootstrapTemplate(path: string, data: Record<string, unknown>): Json {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (error) {
    throw new Error(`Cannot read --templateFile "${path}": ${(error as Error).message}`, { cause: error });
  }
  const rendered = parseGoTemplate(path, text)(data);
  try {
    return JSON.parse(rendered) as Json;
  } catch (error) {
    throw new SyntaxError(
      `--templateFile ${path} rendered text that is not JSON (${(error as Error).message}); ` +
        "check the template's quoting and commas",
      { cause: error },
    );
  }
}
