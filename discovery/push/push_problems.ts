import type { Metrics } from "@mesh/shared/metrics/metrics";

/** Problem metrics a snapshot records: one entry per affected host or cluster. */
export type ProblemMetric =
  | "discovery_destrule_subsets"
  | "discovery_vservice_dup_domain"
  | "discovery_eds_no_instances"
  | "discovery_duplicate_proxy_clusters"
  | "discovery_endpoint_not_ready";

/** Problem metrics whose entries become a `cluster` label in the exported gauge. */
const CLUSTER_LABELLED: ReadonlySet<ProblemMetric> = new Set([
  "discovery_eds_no_instances",
  "discovery_duplicate_proxy_clusters",
]);

/** One recorded problem. */
export interface Problem {
  /** What is wrong, ready to show. */
  readonly message: string;
}

/**
 * Problems found while building a snapshot, by metric and key (host or cluster name). Written only during the
 * build; frozen by {@link PushProblems.freeze}.
 */
export class PushProblems {
  readonly #entries = new Map<ProblemMetric, Map<string, Problem>>();
  #frozen = false;

  /** Records a problem; the first message for a key is kept. */
  add(metric: ProblemMetric, key: string, message: string): void {
    if (this.#frozen) {
      throw new TypeError("PushProblems is frozen: problems are recorded only while building");
    }
    let byKey = this.#entries.get(metric);
    if (!byKey) this.#entries.set(metric, byKey = new Map());
    if (!byKey.has(key)) byKey.set(key, Object.freeze({ message }));
  }

  /** Ends recording. */
  freeze(): this {
    this.#frozen = true;
    return Object.freeze(this);
  }

  /** Keys recorded for a metric, sorted. */
  keys(metric: ProblemMetric): readonly string[] {
    return [...(this.#entries.get(metric)?.keys() ?? [])].sort();
  }

  /** Number of problems recorded for a metric. */
  count(metric: ProblemMetric): number {
    return this.#entries.get(metric)?.size ?? 0;
  }

  /** `{metric: {key: {message}}}`, keys sorted, for `/debug/push_status`. */
  toJSON(): Record<string, Record<string, Problem>> {
    const out: Record<string, Record<string, Problem>> = {};
    for (const metric of [...this.#entries.keys()].sort()) {
      out[metric] = Object.fromEntries(this.keys(metric).map((k) => [k, this.#entries.get(metric)!.get(k)!]));
    }
    return out;
  }

  /**
   * Sets the problem gauges: counts for unlabelled metrics, and 1 per cluster for the cluster-labelled ones
   * (after clearing the previous snapshot's clusters, so fixed problems disappear).
   */
  record(metrics: Metrics): void {
    const counted = [
      "discovery_destrule_subsets",
      "discovery_vservice_dup_domain",
      "discovery_endpoint_not_ready",
    ] as const;
    for (const metric of counted) {
      metrics.gauge(metric).set(this.count(metric));
    }
    for (const metric of CLUSTER_LABELLED) {
      const gauge = metrics.gauge(metric);
      gauge.reset();
      for (const cluster of this.keys(metric)) gauge.set({ cluster }, 1);
    }
  }
}
