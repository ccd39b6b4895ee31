/**
 * The client-side limit on calls to the orchestrator's API (`--orchApiQPS`, `--orchApiBurst`). Kept apart from
 * the orchestrator's client so a writer that only paces its calls (the status writer, in file mode too) does
 * not load the client library.
 *
 * @module
 */
import { systemTimers, type Timers } from "@mesh/shared/time/timers";

/** A token bucket: at most `burst` calls at once, refilled at `qps` per second. */
export class RateLimiter {
  #tokens: number;
  #last: number;

  /** `timers` measure the refill and time the waits (the runtime's by default; a fake clock in tests). */
  constructor(
    readonly qps: number,
    readonly burst: number,
    readonly timers: Timers = systemTimers,
  ) {
    if (!(qps > 0) || !(burst >= 1)) {
      throw new RangeError(`--orchApiQPS must be > 0 and --orchApiBurst ≥ 1; got ${qps} and ${burst}`);
    }
    this.#tokens = burst;
    this.#last = timers.now();
  }

  /** Milliseconds to wait before the next call may go (0 when a token is free); takes the token. */
  take(): number {
    const now = this.timers.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) / 1000) * this.qps);
    this.#last = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.qps) * 1000;
  }

  /** Resolves when a call may go. */
  async acquire(): Promise<void> {
    const wait = this.take();
    if (wait > 0) await new Promise<void>((resolve) => this.timers.setTimeout(resolve, wait));
  }
}
