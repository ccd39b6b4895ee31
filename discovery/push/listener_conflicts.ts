/**
 * Listener conflicts met while generating a snapshot's listeners: a port two services want with different
 * protocols, or an outbound wildcard listener another service already holds. The generators keep the first
 * claimant (deterministically, by hostname) and report the loser beside the resources they return, to the
 * `ConflictSink` of the request; the xDS server keeps one `ListenerConflicts` per snapshot (never in the
 * snapshot, which stays frozen), and the `discovery_conflict_*` gauges follow the latest snapshot, counting
 * the distinct conflicts found so far. A sidecar whose addresses no service
 * endpoint has (a client-only workload, or one its service's endpoints do not list yet) gets no inbound ports:
 * it is reported here too, in `discovery_no_ip`, the reference's count of such proxies.
 *
 * @module
 */
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { VIRTUAL_SERVICE_HTTP } from "./push_request.ts";

/**
 * The conflict metrics, and `discovery_no_ip`. HTTP ports take their wildcard listeners before any TCP service,
 * so the reference's `discovery_conflict_outbound_listener_http_over_current_tcp` never happens here.
 */
export type ConflictMetric =
  | "discovery_conflict_inbound_listener"
  | "discovery_conflict_outbound_listener_tcp_over_current_http"
  | "discovery_conflict_outbound_listener_tcp_over_current_tcp"
  | "discovery_no_ip";

const METRICS: readonly ConflictMetric[] = [
  "discovery_conflict_inbound_listener",
  "discovery_conflict_outbound_listener_tcp_over_current_http",
  "discovery_conflict_outbound_listener_tcp_over_current_tcp",
  "discovery_no_ip",
];

/**
 * Config kinds a sidecar's listener planning never reads (the Envoy LDS generator declares the same): a push
 * that changed only these does not regenerate sidecar listeners, so its snapshot has the previous one's
 * conflicts ({@link ListenerConflicts.inherit}). Of VirtualServices it reads everything but the HTTP routes
 * (hosts, bindings, visibility, order, TCP and TLS routes), so changes to HTTP routes alone are listed.
 */
export const LISTENER_BLIND_KINDS: ReadonlySet<string> = Object.freeze(
  new Set(["WorkloadEntry", "WorkloadGroup", "DestinationRule", "Gateway", "Secret", VIRTUAL_SERVICE_HTTP]),
);

/** Where a generator reports a listener conflict, `key` naming it (e.g. the listener and the losing service). */
export interface ConflictSink {
  /** Records one conflict. */
  add(metric: ConflictMetric, key: string): void;
}

/** The conflicts of one snapshot, by metric, each counted once however many proxies meet it. */
export class ListenerConflicts implements ConflictSink {
  readonly #found = new Map<ConflictMetric, Set<string>>();
  #metrics?: Metrics;

  /** Reports to `metrics` from now on (the latest snapshot's conflicts replace the previous ones: all 0). */
  bind(metrics: Metrics): void {
    this.#metrics = metrics;
    for (const metric of METRICS) metrics.gauge(metric).set(this.count(metric));
  }

  /**
   * Starts from `previous`'s conflicts: for a snapshot whose changes its listeners cannot see, which keeps
   * the listeners, and with them the conflicts, the previous snapshot's generations found.
   */
  inherit(previous: ListenerConflicts): void {
    for (const [metric, keys] of previous.#found) {
      const set = this.#found.get(metric) ?? new Set();
      for (const key of keys) set.add(key);
      this.#found.set(metric, set);
      this.#metrics?.gauge(metric).set(set.size);
    }
  }

  /** Records one conflict, `key` naming it (e.g. the listener and the losing service). */
  add(metric: ConflictMetric, key: string): void {
    let set = this.#found.get(metric);
    if (set === undefined) this.#found.set(metric, set = new Set());
    if (set.has(key)) return;
    set.add(key);
    this.#metrics?.gauge(metric).set(set.size);
  }

  /** Distinct conflicts recorded for `metric`. */
  count(metric: ConflictMetric): number {
    return this.#found.get(metric)?.size ?? 0;
  }

  /** The recorded conflicts of `metric`, sorted. */
  keys(metric: ConflictMetric): string[] {
    return [...this.#found.get(metric) ?? []].sort();
  }
}
