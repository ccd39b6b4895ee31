/**
 * The push history of the last minutes for the debug overview: how many proxy pushes completed and how long
 * they took (from the first change behind a push to the proxy having been sent everything), in time buckets
 * of a fixed-size ring, so memory stays bounded however many pushes there are.
 *
 * @module
 */

/** Upper bounds (seconds) of the duration histogram each bucket keeps; the last catches everything longer. */
const BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, Infinity];

/** One time bucket of the history. */
export interface PushBucket {
  /** Start of the bucket, epoch milliseconds. */
  readonly start: number;
  /** Proxy pushes completed in the bucket. */
  readonly pushes: number;
  /** Pushes per second over the bucket. */
  readonly perSecond: number;
  /** Push-time percentiles in seconds (a histogram bound at most one step above the true value). */
  readonly p50?: number;
  readonly p90?: number;
  readonly p99?: number;
}

/** Settings of a {@link PushHistory}. */
export interface PushHistoryOptions {
  /** Width of one bucket in milliseconds (default 10 s). */
  readonly bucketMs?: number;
  /** Buckets kept (default 60: ten minutes of 10-second buckets). */
  readonly buckets?: number;
  /** The clock, epoch milliseconds (default `Date.now`). */
  readonly now?: () => number;
}

/** Push counts and durations per time bucket over the last minutes; fed where a proxy's push completes. */
export class PushHistory {
  readonly bucketMs: number;
  readonly #size: number;
  readonly #now: () => number;
  /** Bucket number (`floor(time / bucketMs)`) each slot holds, or -1 when empty. */
  readonly #slot: number[];
  readonly #counts: Uint32Array[];
  readonly #max: number[];

  /** An empty history; `buckets` × `bucketMs` is the span it remembers. */
  constructor(options: PushHistoryOptions = {}) {
    this.bucketMs = options.bucketMs ?? 10_000;
    this.#size = options.buckets ?? 60;
    if (!(this.bucketMs >= 1) || !Number.isInteger(this.#size) || this.#size < 1) {
      throw new RangeError(
        `Push history of ${this.#size} buckets of ${this.bucketMs} ms: expected at least one bucket of 1 ms`,
      );
    }
    this.#now = options.now ?? Date.now;
    this.#slot = new Array(this.#size).fill(-1);
    this.#counts = Array.from({ length: this.#size }, () => new Uint32Array(BOUNDS.length));
    this.#max = new Array(this.#size).fill(0);
  }

  /** The span the history covers, in milliseconds. */
  get spanMs(): number {
    return this.bucketMs * this.#size;
  }

  /** Records one completed proxy push that took `seconds`. */
  record(seconds: number): void {
    const bucket = Math.floor(this.#now() / this.bucketMs);
    const index = bucket % this.#size;
    if (this.#slot[index] !== bucket) {
      this.#slot[index] = bucket;
      this.#counts[index]!.fill(0);
      this.#max[index] = 0;
    }
    const value = Number.isFinite(seconds) && seconds > 0 ? seconds : 0;
    this.#counts[index]![BOUNDS.findIndex((b) => value <= b)]!++;
    this.#max[index] = Math.max(this.#max[index]!, value);
  }

  /** Every bucket of the window ending now, oldest first; buckets without pushes count zero. */
  series(): PushBucket[] {
    const last = Math.floor(this.#now() / this.bucketMs);
    const out: PushBucket[] = [];
    for (let bucket = last - this.#size + 1; bucket <= last; bucket++) {
      const index = ((bucket % this.#size) + this.#size) % this.#size;
      const counts = this.#slot[index] === bucket ? this.#counts[index]! : undefined;
      out.push(summarize(bucket * this.bucketMs, this.bucketMs, counts, this.#max[index]!));
    }
    return out;
  }

  /** The whole window as one bucket. */
  summary(): PushBucket {
    const last = Math.floor(this.#now() / this.bucketMs);
    const total = new Uint32Array(BOUNDS.length);
    let max = 0;
    for (let index = 0; index < this.#size; index++) {
      if (this.#slot[index]! <= last - this.#size) continue;
      this.#counts[index]!.forEach((n, i) => total[i]! += n);
      max = Math.max(max, this.#max[index]!);
    }
    return summarize((last - this.#size + 1) * this.bucketMs, this.spanMs, total, max);
  }
}

function summarize(start: number, widthMs: number, counts: Uint32Array | undefined, max: number): PushBucket {
  const pushes = counts === undefined ? 0 : counts.reduce((a, b) => a + b, 0);
  const base = { start, pushes, perSecond: pushes / (widthMs / 1000) };
  if (counts === undefined || pushes === 0) return base;
  return {
    ...base,
    p50: percentile(counts, pushes, 0.5, max),
    p90: percentile(counts, pushes, 0.9, max),
    p99: percentile(counts, pushes, 0.99, max),
  };
}

/** The bound of the first histogram bucket reaching fraction `q` of `total`, never above the largest seen. */
function percentile(counts: Uint32Array, total: number, q: number, max: number): number {
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i]!;
    if (seen >= rank) return Math.min(BOUNDS[i]!, max);
  }
  return max;
}
