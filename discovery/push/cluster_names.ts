/**
 * Istio's cluster names, `direction|port|subset|host` (`outbound|7070|v1|greeter.example.svc.cluster.local`;
 * the subset is empty for the whole service). Built with `outboundClusterName` from the push snapshot's
 * service index; parsed here, because proxies ask for clusters and endpoints by these names.
 *
 * @module
 */
import type { MemoStats } from "@mesh/shared/memo/memo_stats";

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

/** Estimated bytes an entry costs beyond its name's characters: its table slot and the frozen parts. */
export const CLUSTER_NAME_ENTRY_OVERHEAD = 128;

/**
 * Parsed cluster names, remembered (frozen) by a push snapshot for as long as it serves: every push parses
 * each watched name of every proxy, and a fleet watches the same few thousand names. The names come from
 * proxies, so the memo is bounded by bytes (past `maxBytes` it starts afresh, which costs only a parse) and
 * goes with its snapshot.
 */
export class ClusterNameMemo {
  readonly #maxBytes: number;
  #parsed = new Map<string, ClusterNameParts | null>();
  #bytes = 0;

  /** Throws RangeError when `maxBytes` is below 1. */
  constructor(maxBytes = 8 * 1024 * 1024) {
    if (!(maxBytes >= 1)) {
      throw new RangeError(`Invalid cluster name memo bound "${maxBytes}" bytes: expected at least 1`);
    }
    this.#maxBytes = maxBytes;
  }

  /** {@link parseClusterName} of `name`, remembered. */
  parse(name: string): ClusterNameParts | undefined {
    let parts = this.#parsed.get(name);
    if (parts === undefined) {
      parts = parseClusterName(name) ?? null;
      const cost = name.length + CLUSTER_NAME_ENTRY_OVERHEAD;
      if (cost > this.#maxBytes) return parts ?? undefined;
      if (this.#bytes + cost > this.#maxBytes) this.clear();
      this.#parsed.set(name, parts);
      this.#bytes += cost;
    }
    return parts ?? undefined;
  }

  /** Forgets every name. */
  clear(): void {
    this.#parsed = new Map();
    this.#bytes = 0;
  }

  /** Entries and estimated bytes held now. */
  stats(): MemoStats {
    return { entries: this.#parsed.size, bytes: this.#bytes, maxBytes: this.#maxBytes };
  }
}

/**
 * Splits a cluster name into its parts; undefined when it is not `outbound|port|subset|host` or
 * `inbound|port|subset|host` with a port in 1..65535 and a non-empty host. The host may itself contain no `|`.
 */
export function parseClusterName(name: string): ClusterNameParts | undefined {
  const parts = name.split("|");
  if (parts.length !== 4) return undefined;
  const [direction, portText, subset, hostname] = parts;
  if (direction !== "outbound" && direction !== "inbound") return undefined;
  if (!/^[1-9][0-9]{0,4}$/.test(portText)) return undefined;
  const port = Number(portText);
  if (port > 65535 || hostname === "") return undefined;
  return Object.freeze({ direction, port, subset, hostname });
}
