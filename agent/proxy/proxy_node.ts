/**
 * The xDS node the agent presents for its proxy: id `<role>~<IP>~<pod>.<namespace>~<domain>` (the domain being
 * `<namespace>.svc.cluster.local` unless `--domain` says otherwise),
 * and metadata from `MESH_META_*` (strings) and `MESH_METAJSON_*` (JSON), the pod's labels, and what the agent
 * knows (namespace, addresses, cluster, service account, interception mode, version).
 *
 * @module
 */
import type { JsonObject, JsonValue } from "@mesh/proto/struct_json";

/** The role of the proxy: a sidecar beside a workload, or a gateway (`router`). */
export type ProxyRole = "sidecar" | "router";

/** What the node is built from. */
export interface NodeInputs {
  readonly role: ProxyRole;
  /** `POD_NAME`. */
  readonly podName: string;
  /** `POD_NAMESPACE`. */
  readonly podNamespace: string;
  /** `INSTANCE_IP` first, then the host's other addresses. */
  readonly ips: readonly string[];
  /** `--domain`. */
  readonly domain: string;
  /** `MESH_META_*` variables as set. */
  readonly meta: Readonly<Record<string, string>>;
  /** `MESH_METAJSON_*` variables as set. */
  readonly metaJson: Readonly<Record<string, string>>;
  /** The pod's labels (`./etc/mesh/pod/labels`). */
  readonly labels: Readonly<Record<string, string>>;
  /** `--serviceCluster`. */
  readonly serviceCluster: string;
  /** The agent's version. */
  readonly version: string;
  /** The ProxyConfig fields the discovery server reads from the node (`tracing`), sent as `PROXY_CONFIG`. */
  readonly proxyConfig?: JsonObject;
}

/** The node as the bootstrap and the xDS proxy send it. */
export interface ProxyNode {
  readonly id: string;
  readonly cluster: string;
  readonly metadata: JsonObject;
}

/**
 * Builds the node.
 *
 * @throws {SyntaxError} naming the variable when a `MESH_METAJSON_*` value is not JSON
 * @throws {RangeError} when no IP is known
 */
export function buildProxyNode(inputs: NodeInputs): ProxyNode {
  const ip = inputs.ips[0];
  if (ip === undefined) {
    throw new RangeError("No address for the node id: set INSTANCE_IP or give the host an address");
  }
  const metadata: Record<string, JsonValue> = {};
  for (const [name, value] of Object.entries(inputs.meta)) metadata[name.slice("MESH_META_".length)] = value;
  for (const [name, value] of Object.entries(inputs.metaJson)) {
    try {
      metadata[name.slice("MESH_METAJSON_".length)] = JSON.parse(value);
    } catch (cause) {
      throw new SyntaxError(`${name} is not JSON: ${(cause as Error).message}`, { cause });
    }
  }
  Object.assign(metadata, {
    NAMESPACE: inputs.podNamespace,
    POD_NAME: inputs.podName,
    INSTANCE_IPS: inputs.ips.join(","),
    LABELS: { ...inputs.labels },
    MESH_VERSION: inputs.version,
    ...(inputs.proxyConfig && Object.keys(inputs.proxyConfig).length > 0
      ? { PROXY_CONFIG: inputs.proxyConfig }
      : {}),
    ...(metadata.INTERCEPTION_MODE === undefined ? { INTERCEPTION_MODE: "REDIRECT" } : {}),
  });
  return {
    id:
      // `--domain` defaults to `<namespace>.svc.cluster.local`: the last part reads `<namespace>.svc.<cluster>`.
      `${inputs.role}~${ip}~${inputs.podName}.${inputs.podNamespace}~${inputs.domain}`,
    cluster: inputs.serviceCluster,
    metadata,
  };
}
