/**
 * Istio's cluster names, `direction|port|subset|host` (`outbound|7070|v1|greeter.example.svc.cluster.local`;
 * the subset is empty for the whole service). Built with `outboundClusterName` from the push snapshot's
 * service index; parsed here, because proxyless gRPC clients ask for clusters and endpoints by these names.
 *
 * @module
 */
/** Which way the traffic of a cluster flows, as seen from the proxy. */
export type TrafficDirection = "outbound" | "inbound";

/** The parts of a cluster name. */
export interface ClusterNameParts {
  /** `outbound` for traffic the proxy sends, `inbound` for traffic it receives. */
  readonly direction: TrafficDirection;
  /** Service port, 1 to 65535. */
  readonly port: number;
  /** Empty for the cluster of the whole service. */
  readonly subset: string;
  /** Service hostname; never empty, never contains `|`. */
  readonly hostname: string;
}

/** Most names {@link parseClusterName} remembers; past it the memo starts over. */
const PARSED_MAX = 100_000;
const parsed = new Map<string, ClusterNameParts | null>();

/**
 * Splits a cluster name into its parts; undefined when it is not `outbound|port|subset|host` or
 * `inbound|port|subset|host` with a port in 1..65535 and a non-empty host. The host may itself contain no `|`.
 * Results are remembered (frozen): every push parses each watched name of every proxy, and a fleet watches
 * the same few thousand names.
 */
export function parseClusterName(name: string): ClusterNameParts | undefined {
  let parts = parsed.get(name);
  if (parts === undefined) {
    if (parsed.size >= PARSED_MAX) parsed.clear();
    parts = splitClusterName(name) ?? null;
    parsed.set(name, parts);
  }
  return parts ?? undefined;
}

function splitClusterName(name: string): ClusterNameParts | undefined {
  const parts = name.split("|");
  if (parts.length !== 4) return undefined;
  const [direction, portText, subset, hostname] = parts;
  if (direction !== "outbound" && direction !== "inbound") return undefined;
  if (!/^[1-9][0-9]{0,4}$/.test(portText)) return undefined;
  const port = Number(portText);
  if (port > 65535 || hostname === "") return undefined;
  return Object.freeze({ direction, port, subset, hostname });
}
