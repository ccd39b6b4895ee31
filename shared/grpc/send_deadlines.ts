/**
 * The deadlines of a server's sends in progress (its send ports'), all as long (`DISCOVERY_XDS_SEND_TIMEOUT`
 * for ADS), kept by one timer rather than one per send: a push to ten thousand proxies made and cleared ten
 * thousand timers. Every deadline has the same length, so the order sends start in is the order they expire
 * in, and the timer is armed for the oldest only.
 *
 * @module
 */
import { systemTimers, type Timers } from "../time/timers.ts";

/** What a deadline ends: a send in progress. */
export interface Expiring {
  /** Called once the timeout has passed, unless the deadline was untracked first. */
  expire(): void;
}

/** Sends' deadlines under one timer; owned by one server. */
export class SendDeadlines {
  /** Each tracked send and when it expires; insertion order is deadline order. */
  readonly #pending = new Map<Expiring, number>();
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

  /**
   * Calls `sent.expire()` once `timeoutMs` have passed, unless {@link untrack} is called first; the send
   * itself is the deadline, so tracking one makes no object of its own.
   */
  track(sent: Expiring): void {
    this.#pending.set(sent, this.#timers.now() + this.timeoutMs);
    if (this.#timer === undefined) this.#arm(this.timeoutMs);
  }

  /** Forgets `sent`'s deadline (a send that ended); nothing when it is not tracked. */
  untrack(sent: Expiring): void {
    if (!this.#pending.delete(sent) || this.#pending.size > 0) return;
    this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(ms: number): void {
    this.#timer = this.#timers.setTimeout(() => this.#expire(), ms);
  }

  #expire(): void {
    this.#timer = undefined;
    const now = this.#timers.now();
    for (const [sent, at] of this.#pending) {
      if (at > now) break;
      this.#pending.delete(sent);
      sent.expire();
    }
    // `expire` may have added sends (and armed the timer) or settled others.
    const next = this.#pending.values().next();
    if (this.#timer === undefined && !next.done) this.#arm(Math.max(1, Math.ceil(next.value - now)));
  }
}
