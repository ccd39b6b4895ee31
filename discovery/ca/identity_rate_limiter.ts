/**
 * Per-identity token buckets for the CA: each proven identity may send `burst` requests at once and `qps` a
 * second after that. A workload renews its certificate once in many hours, so a caller past its bucket is
 * looping or hostile, and is refused with the time its next token comes.
 *
 * The table is bounded: a bucket that has refilled is dropped (a new one starts full, so forgetting it changes
 * nothing), and past `maxIdentities` the identity seen least recently is forgotten even if it has not.
 *
 * @module
 */

/** The limits of an `IdentityRateLimiter`. */
export interface IdentityRateLimits {
  /** Tokens refilled per second; above 0. */
  readonly qps: number;
  /** Bucket size: requests allowed at once; at least 1. */
  readonly burst: number;
  /** Identities tracked at most; at least 1. */
  readonly maxIdentities: number;
}

/** The answer for one request. */
export type RateDecision =
  | { readonly allowed: true }
  | {
    readonly allowed: false;
    /** Milliseconds until a token is free. */
    readonly retryAfterMs: number;
    /** True for the first refusal since this identity was last allowed: the one worth logging. */
    readonly first: boolean;
  };

interface Bucket {
  tokens: number;
  /** Monotonic time `tokens` was computed at. */
  at: number;
  /** Whether a refusal was reported since the last allowed request. */
  refused: boolean;
}

/** Token buckets keyed by identity, in least-recently-seen order, on an injected monotonic clock. */
export class IdentityRateLimiter {
  readonly #limits: IdentityRateLimits;
  readonly #now: () => number;
  /** Insertion order is recency: a bucket is moved to the end each time it is used. */
  readonly #buckets = new Map<string, Bucket>();

  /** Throws RangeError for limits outside their ranges. */
  constructor(limits: IdentityRateLimits, now: () => number) {
    if (!(limits.qps > 0) || !(limits.burst >= 1) || !(limits.maxIdentities >= 1)) {
      throw new RangeError(
        `Invalid CSR rate limits qps=${limits.qps} burst=${limits.burst} maxIdentities=${limits.maxIdentities}: ` +
          "expected qps above 0, burst and maxIdentities at least 1",
      );
    }
    this.#limits = limits;
    this.#now = now;
  }

  /** Identities currently tracked. */
  get size(): number {
    return this.#buckets.size;
  }

  /** Takes a token of `identity`'s bucket, or says when one will be free. */
  take(identity: string): RateDecision {
    const now = this.#now();
    this.#dropRefilled(now);
    const bucket = this.#buckets.get(identity) ?? { tokens: this.#limits.burst, at: now, refused: false };
    this.#buckets.delete(identity);
    bucket.tokens = this.#tokensAt(bucket, now);
    bucket.at = now;
    this.#buckets.set(identity, bucket);
    if (this.#buckets.size > this.#limits.maxIdentities) {
      this.#buckets.delete(this.#buckets.keys().next().value!);
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
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
    for (const [identity, bucket] of this.#buckets) {
      if (this.#tokensAt(bucket, now) < this.#limits.burst) return;
      this.#buckets.delete(identity);
    }
  }
}
