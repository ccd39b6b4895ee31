/**
 * The deadlines of a server's sends in progress (its send ports'), all as long (`DISCOVERY_XDS_SEND_TIMEOUT`
 * for ADS), kept by one timer rather than one per send: a push to ten thousand proxies made and cleared ten
 * thousand timers. Every deadline has the same length, so the order sends start in is the order they expire
 * in, and the timer is armed for the oldest only.
 *
 * @module
 */
import { systemTimers, type Timers } from "../time/timers.ts";

interface Deadline {
  readonly at: number;
  readonly expire: () => void;
}

/** Sends' deadlines under one timer; owned by one server. */
export class SendDeadlines {
  /** Insertion order is deadline order. */
  readonly #pending = new Set<Deadline>();
  readonly #timers: Timers;
  #timer: unknown;

  /** Throws RangeError when `timeoutMs` is not a positive number. */
  constructor(readonly timeoutMs: number, timers: Timers = systemTimers) {
    if (!(timeoutMs > 0)) {
      throw new RangeError(`Invalid send timeout "${timeoutMs}" ms: expected a positive number`);
    }
    this.#timers = timers;
  }

  /** Sends whose deadline is pending. */
  get size(): number {
    return this.#pending.size;
  }

  /** Calls `expire` once `timeoutMs` have passed, unless the returned function is called first. */
  add(expire: () => void): () => void {
    const deadline: Deadline = { at: this.#timers.now() + this.timeoutMs, expire };
    this.#pending.add(deadline);
    if (this.#timer === undefined) this.#arm(this.timeoutMs);
    return () => {
      if (!this.#pending.delete(deadline) || this.#pending.size > 0) return;
      this.#timers.clearTimeout(this.#timer);
      this.#timer = undefined;
    };
  }

  #arm(ms: number): void {
    this.#timer = this.#timers.setTimeout(() => this.#expire(), ms);
  }

  #expire(): void {
    this.#timer = undefined;
    const now = this.#timers.now();
    for (const deadline of this.#pending) {
      if (deadline.at > now) break;
      this.#pending.delete(deadline);
      deadline.expire();
    }
    // `expire` may have added sends (and armed the timer) or settled others.
    const next = this.#pending.values().next();
    if (this.#timer === undefined && !next.done) this.#arm(Math.max(1, Math.ceil(next.value.at - now)));
  }
}
