import { isIp } from "@mesh/shared/config/validation/ip";
import { pathKey, quoteExcerpt } from "@mesh/shared/config/validation/excerpt";
import { deepFreeze } from "./deep_freeze.ts";
import { parseProxyTracing, type ProxyTracing, ProxyTracingError } from "./proxy_tracing.ts";

/** The two kinds of proxy a node id can name: a workload's sidecar or a gateway ("router"). */
export type ProxyType = "sidecar" | "router";

/** Traffic capture modes a sidecar can report in `INTERCEPTION_MODE`. */
export type InterceptionMode = "REDIRECT" | "TPROXY" | "NONE";

/** Node metadata, read from the keys the agent writes (Istio's NodeMetadata JSON names). */
export interface ProxyMetadata {
  /** `NAMESPACE`: the config namespace, overriding the node id's. */
  readonly namespace?: string;
  /** `LABELS`: the workload's labels; numbers and booleans are turned into strings. */
  readonly labels: Readonly<Record<string, string>>;
  /** `CLUSTER_ID`: the cluster the workload runs in. */
  readonly clusterId?: string;
  /** `INTERCEPTION_MODE`: how the sidecar captures inbound traffic. */
  readonly interceptionMode?: InterceptionMode;
  /** `GENERATOR`: the generator family to use for this proxy, such as `grpc`. */
  readonly generator?: string;
  /** `SERVICE_ACCOUNT`: the workload's service account. */
  readonly serviceAccount?: string;
  /** `NETWORK`: the network the workload is on (see mesh networks). */
  readonly network?: string;
  /** `MESH_VERSION` (or `ISTIO_VERSION`): the agent's version. */
  readonly meshVersion?: string;
  /** `POD_NAME`: the workload's pod name. */
  readonly podName?: string;
  /** `INSTANCE_IPS` split on commas: the workload's addresses, each a valid IP; empty when not sent. */
  readonly instanceIps: readonly string[];
  /** `WORKLOAD_NAME`: the name of the workload (deployment) the pod belongs to. */
  readonly workloadName?: string;
  /** WorkloadGroup (in the proxy's namespace) to register this workload in: `AUTO_REGISTER_GROUP`. */
  readonly autoRegisterGroup?: string;
  /** `PROXY_CONFIG.tracing`: the proxy's own tracing settings, checked; absent when it sent none. */
  readonly tracing?: ProxyTracing;
  /** Every metadata key as sent, for generators that need a key this type does not name. */
  readonly raw: Readonly<Record<string, unknown>>;
}

/** Where a proxy runs, from the xDS node's locality. */
export interface ProxyLocality {
  /** Region; absent when the node sent none. */
  readonly region?: string;
  /** Zone within the region. */
  readonly zone?: string;
  /** Sub-zone within the zone (`subZone` or `sub_zone` in the node). */
  readonly subZone?: string;
}

/** A connected proxy as its xDS node describes it. Immutable. */
export interface Proxy {
  /** The pod id from the node id (`name.namespace`), the key the debug interface and logs use. */
  readonly id: string;
  /** The complete node id as sent. */
  readonly nodeId: string;
  /** Sidecar or gateway, from the first part of the node id. */
  readonly type: ProxyType;
  /** The workload's addresses: `INSTANCE_IPS` when sent, else the address in the node id. */
  readonly ipAddresses: readonly string[];
  /** The pod name part of the pod id; never empty. */
  readonly podName: string;
  /** Config namespace: metadata `NAMESPACE`, else the namespace part of the pod id. */
  readonly namespace: string;
  /** DNS domain of the workload, e.g. `ns.svc.cluster.local`. */
  readonly dnsDomain: string;
  /** The node's `cluster` field (Envoy's service cluster), when sent. */
  readonly serviceCluster?: string;
  /** Node metadata as the agent sent it. */
  readonly metadata: ProxyMetadata;
  /** The node's locality; absent when it sent no region, zone or sub-zone. */
  readonly locality?: ProxyLocality;
  /**
   * The SPIFFE identities its stream's caller proved on the secure port; absent on the plaintext port, where
   * nothing about the caller is verified.
   */
  readonly verifiedIdentities?: readonly string[];
}

/** An xDS node whose id or metadata cannot describe a proxy; the stream is refused with this message. */
export class InvalidNodeError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "InvalidNodeError";
  }
}

/** The xDS node fields parseProxy reads; metadata is the node's Struct decoded to plain JS values. */
export interface XdsNode {
  readonly id?: string;
  readonly cluster?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly locality?: {
    readonly region?: string;
    readonly zone?: string;
    readonly subZone?: string;
    readonly sub_zone?: string;
  };
}

const NODE_ID_FORMAT = "sidecar|router~<ip>~<pod>.<namespace>~<namespace>.svc.<domain>";
const INTERCEPTION_MODES: readonly string[] = ["REDIRECT", "TPROXY", "NONE"];
/**
 * Most characters of a node id or value a refusal quotes: the message is the stream's gRPC status, sent in a
 * trailer that a megabyte of echoed input would not fit, and a log line.
 */
const QUOTED_CHARS = 200;

function quoted(text: string): string {
  return quoteExcerpt(text, QUOTED_CHARS);
}

/**
 * Parses and validates an xDS node into a Proxy.
 *
 * @throws {InvalidNodeError} when the id does not have the form
 *   `sidecar|router~IP~pod.namespace~namespace.svc.<domain>` or a metadata value has the wrong shape.
 */
export function parseProxy(node: XdsNode): Proxy {
  const nodeId = node.id ?? "";
  if (nodeId === "") throw new InvalidNodeError(`Node id is empty: expected "${NODE_ID_FORMAT}"`);
  const parts = nodeId.split("~");
  if (parts.length !== 4) {
    throw new InvalidNodeError(
      `Node id ${quoted(nodeId)} has ${parts.length} "~"-separated parts: expected 4, "${NODE_ID_FORMAT}"`,
    );
  }
  const [typeText, idIp, podId, dnsDomain] = parts;
  if (typeText !== "sidecar" && typeText !== "router") {
    throw new InvalidNodeError(
      `Node id ${quoted(nodeId)} has type ${quoted(typeText)}: expected "sidecar" or "router"`,
    );
  }
  if (!isIp(idIp)) {
    throw new InvalidNodeError(
      `Node id ${quoted(nodeId)} has address ${quoted(idIp)}: expected an IPv4 or IPv6 address`,
    );
  }
  if (podId === "") {
    throw new InvalidNodeError(`Node id ${quoted(nodeId)} has an empty pod id: expected "<pod>.<namespace>"`);
  }
  if (dnsDomain === "") {
    throw new InvalidNodeError(
      `Node id ${quoted(nodeId)} has an empty DNS domain: expected "<namespace>.svc.<domain>"`,
    );
  }
  const metadata = parseMetadata(nodeId, node.metadata ?? {});
  const dot = podId.indexOf(".");
  const podName = dot < 0 ? podId : podId.slice(0, dot);
  const idNamespace = dot < 0 ? "" : podId.slice(dot + 1);
  if (podName === "") {
    throw new InvalidNodeError(
      `Node id ${quoted(nodeId)} has pod id ${quoted(podId)} with an empty pod name`,
    );
  }
  const namespace = metadata.namespace ?? idNamespace;
  if (namespace === "") {
    throw new InvalidNodeError(
      `Node id ${quoted(nodeId)} has pod id ${
        quoted(podId)
      } without a namespace and the metadata has no NAMESPACE: ` +
        `expected "<pod>.<namespace>"`,
    );
  }
  const locality = parseLocality(node.locality);
  return deepFreeze({
    id: podId,
    nodeId,
    type: typeText,
    ipAddresses: metadata.instanceIps.length > 0 ? [...metadata.instanceIps] : [idIp],
    podName,
    namespace,
    dnsDomain,
    ...(node.cluster ? { serviceCluster: node.cluster } : {}),
    metadata,
    ...(locality ? { locality } : {}),
  });
}

function parseMetadata(nodeId: string, raw: Readonly<Record<string, unknown>>): ProxyMetadata {
  const text = (key: string, ...aliases: string[]): string | undefined => {
    for (const k of [key, ...aliases]) {
      const value = raw[k];
      if (value === undefined || value === null || value === "") continue;
      if (typeof value !== "string") {
        throw new InvalidNodeError(
          `Node ${quoted(nodeId)} metadata ${k} is ${describe(value)}: expected a string`,
        );
      }
      return value;
    }
    return undefined;
  };
  const interceptionMode = text("INTERCEPTION_MODE");
  if (interceptionMode !== undefined && !INTERCEPTION_MODES.includes(interceptionMode)) {
    throw new InvalidNodeError(
      `Node ${quoted(nodeId)} metadata INTERCEPTION_MODE is ${quoted(interceptionMode)}: expected one of ` +
        INTERCEPTION_MODES.map((m) => `"${m}"`).join(", "),
    );
  }
  const instanceIps = (text("INSTANCE_IPS") ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
  for (const ip of instanceIps) {
    if (!isIp(ip)) {
      throw new InvalidNodeError(
        `Node ${quoted(nodeId)} metadata INSTANCE_IPS has ${
          quoted(ip)
        }: expected comma-separated IP addresses`,
      );
    }
  }
  let tracing: ProxyTracing | undefined;
  try {
    tracing = parseProxyTracing(raw["PROXY_CONFIG"]);
  } catch (error) {
    if (!(error instanceof ProxyTracingError)) throw error;
    throw new InvalidNodeError(`Node ${quoted(nodeId)} metadata ${error.message}`, { cause: error });
  }
  const optional = <K extends string>(key: K, value: string | undefined) =>
    value === undefined ? {} : { [key]: value } as Record<K, string>;
  return {
    ...optional("namespace", text("NAMESPACE")),
    labels: parseLabels(nodeId, raw["LABELS"]),
    ...optional("clusterId", text("CLUSTER_ID")),
    ...(interceptionMode ? { interceptionMode: interceptionMode as InterceptionMode } : {}),
    ...optional("generator", text("GENERATOR")),
    ...optional("serviceAccount", text("SERVICE_ACCOUNT")),
    ...optional("network", text("NETWORK")),
    ...optional("meshVersion", text("MESH_VERSION", "ISTIO_VERSION")),
    ...optional("podName", text("POD_NAME")),
    instanceIps,
    ...optional("workloadName", text("WORKLOAD_NAME")),
    ...optional("autoRegisterGroup", text("AUTO_REGISTER_GROUP")),
    ...(tracing ? { tracing } : {}),
    raw: structuredClone(raw) as Record<string, unknown>,
  };
}

function parseLabels(nodeId: string, value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidNodeError(
      `Node ${quoted(nodeId)} metadata LABELS is ${describe(value)}: expected a map of strings`,
    );
  }
  const labels: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    // Struct decoding can turn label values such as "1" into numbers or booleans; they are strings in the API.
    if (typeof v === "string") labels[key] = v;
    else if (typeof v === "number" || typeof v === "boolean") labels[key] = String(v);
    else {
      throw new InvalidNodeError(
        `Node ${quoted(nodeId)} metadata LABELS.${pathKey(key)} is ${describe(v)}: expected a string`,
      );
    }
  }
  return labels;
}

function parseLocality(locality: XdsNode["locality"]): ProxyLocality | undefined {
  if (!locality) return undefined;
  const subZone = locality.subZone || locality.sub_zone;
  const out: { region?: string; zone?: string; subZone?: string } = {};
  if (locality.region) out.region = locality.region;
  if (locality.zone) out.zone = locality.zone;
  if (subZone) out.subZone = subZone;
  return Object.keys(out).length > 0 ? out : undefined;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (value === null) return "null";
  if (typeof value === "object") return "a map";
  return typeof value === "string" ? `string ${quoted(value)}` : `${typeof value} ${String(value)}`;
}
