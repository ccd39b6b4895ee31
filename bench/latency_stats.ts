/**
 * Percentile summaries of latency samples.
 *
 * @module
 */

/** A summary of samples in milliseconds. */
export interface LatencySummary {
  readonly count: number;
  readonly min: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** The value at quantile `q` (0..1) of sorted samples, by the nearest-rank method. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Summarizes samples; NaN fields when there are none. */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (v: number) => Math.round(v * 10) / 10;
  return {
    count: sorted.length,
    min: round(sorted[0] ?? NaN),
    p50: round(quantile(sorted, 0.5)),
    p90: round(quantile(sorted, 0.9)),
    p99: round(quantile(sorted, 0.99)),
    max: round(sorted[sorted.length - 1] ?? NaN),
    mean: round(sorted.reduce((s, v) => s + v, 0) / (sorted.length || NaN)),
  };
}
