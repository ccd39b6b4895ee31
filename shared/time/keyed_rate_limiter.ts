/**
 * Token buckets keyed by caller (the CA's proven identities, the xDS ports' peer addresses): each key may take
 * `burst` at once and `qps` a second after that, and a key past its bucket is refused with the time its next
 * token comes.
 *
 * The table is bounded: a bucket that has refilled is dropped (a new one starts full, so forgetting it changes
 * nothing), and past `maxKeys` the key seen least recently is forgotten even if it has not.
 *
 * @module
 */

/** The limits of a `KeyedRateLimiter`. */
export interface KeyedRateLimits {
  /** Tokens refilled per second; above 0. */
  readonly qps: number;
  /** Bucket size: requests allowed at once; at least 1. */
  readonly burst: number;
  /** Keys tracked at most; at least 1. */
  readonly maxKeys: number;
}

/** The answer for one request. */
export type RateDecision =
  | { readonly allowed: true }
  | {
    readonly allowed: false;
    /** Milliseconds until a token is free. */
    readonly retryAfterMs: number;
    /** True for the first refusal since this key was last allowed: the one worth logging. */
    readonly first: boolean;
  };

interface Bucket {
  tokens: number;
  /** Monotonic time `tokens` was computed at. */
  at: number;
  /** Whether a refusal was reported since the last allowed request. */
  refused: boolean;
}

/** Token buckets keyed by caller, in least-recently-seen order, on an injected monotonic clock. */
export class KeyedRateLimiter {
  readonly #limits: KeyedRateLimits;
  readonly #now: () => number;
  /** Insertion order is recency: a bucket is moved to the end each time it is used. */
  readonly #buckets = new Map<string, Bucket>();

  /** Throws RangeError for limits outside their ranges. */
  constructor(limits: KeyedRateLimits, now: () => number) {
    if (!(limits.qps > 0) || !(limits.burst >= 1) || !(limits.maxKeys >= 1)) {
      throw new RangeError(
        `Invalid rate limits qps=${limits.qps} burst=${limits.burst} maxKeys=${limits.maxKeys}: ` +
          "expected qps above 0, burst and maxKeys at least 1",
      );
    }
    this.#limits = limits;
    this.#now = now;
  }

  /** The limits it was built with. */
  get limits(): KeyedRateLimits {
    return this.#limits;
  }

  /** Keys currently tracked. */
  get size(): number {
    return this.#buckets.size;
  }

  /** Takes a token of `key`'s bucket, or says when one will be free. */
  take(key: string): RateDecision {
    const now = this.#now();
    this.#dropRefilled(now);
    const bucket = this.#buckets.get(key) ?? { tokens: this.#limits.burst, at: now, refused: false };
    this.#buckets.delete(key);
    bucket.tokens = this.#tokensAt(bucket, now);
    bucket.at = now;
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > this.#limits.maxKeys) {
      this.#buckets.delete(this.#buckets.keys().next().value!);
    }
    // The slack keeps float error from refusing a token that has exactly refilled (30 s at 2 a minute).
    if (bucket.tokens >= 1 - 1e-9) {
      bucket.tokens = Math.max(0, bucket.tokens - 1);
      bucket.refused = false;
      return { allowed: true };
    }
    const first = !bucket.refused;
    bucket.refused = true;
    // The nanosecond of slack keeps float error from rounding an exact wait up by a millisecond.
    const retryAfterMs = Math.max(1, Math.ceil(((1 - bucket.tokens) / this.#limits.qps) * 1000 - 1e-6));
    return { allowed: false, retryAfterMs, first };
  }

  #tokensAt(bucket: Bucket, now: number): number {
    return Math.min(this.#limits.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.#limits.qps);
  }

  /** Drops refilled buckets from the least recently seen end, stopping at the first that is not. */
  #dropRefilled(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (this.#tokensAt(bucket, now) < this.#limits.burst) return;
      this.#buckets.delete(key);
    }
  }
}
