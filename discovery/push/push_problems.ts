import type { Metrics } from "@mesh/shared/metrics/metrics";
import { FrozenMap } from "./frozen_map.ts";

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
   * Sets the problem gauges: counts for unlabelled metrics, and 1 per cluster for the cluster-labelled ones.
   * With `previous`, the problems these gauges were last set from, only the clusters that differ are set or
   * removed: a snapshot of thousands of services without endpoints repeats its predecessor's problems, and
   * setting each labelled series again held the loop for tens of milliseconds per snapshot. Without it the
   * gauges are cleared first, so fixed problems disappear.
   */
  record(metrics: Metrics, previous?: PushProblems): void {
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
      const now = this.#entries.get(metric) ?? NO_ENTRIES;
      if (previous === undefined) {
        gauge.reset();
        for (const cluster of now.keys()) gauge.set({ cluster }, 1);
        continue;
      }
      const before = previous.#entries.get(metric) ?? NO_ENTRIES;
      for (const cluster of before.keys()) if (!now.has(cluster)) gauge.remove({ cluster });
      for (const cluster of now.keys()) if (!before.has(cluster)) gauge.set({ cluster }, 1);
    }
  }
}

const NO_ENTRIES: ReadonlyMap<string, Problem> = new FrozenMap();
