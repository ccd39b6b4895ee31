/**
 * The send timeout of every response in flight (`DISCOVERY_XDS_SEND_TIMEOUT`), watched by one timer. Every
 * deadline has the same length, so deadlines expire in the order they were started: a queue in insertion
 * order and a timer armed for its head are enough. A timer created and cleared per response was a
 * measurable part of a push to a thousand proxies.
 *
 * @module
 */
import { systemTimers, type Timers } from "../../shared/time/timers.ts";

/** `#timer` while expired deadlines are being called: a send they start must not arm a second timer. */
const EXPIRING = Symbol("expiring");

interface Deadline {
  readonly at: number;
  readonly onExpire: () => void;
}

/** Deadlines of one length for sends in progress; `start` one per send and call what it returns when done. */
export class SendDeadlines {
  readonly #timers: Timers;
  /** Insertion order is deadline order: every deadline is `timeoutMs` from its start. */
  readonly #pending = new Set<Deadline>();
  #timer: unknown | typeof EXPIRING;

  /** Deadlines `timeoutMs` long (a positive number of milliseconds), on `timers`. */
  constructor(readonly timeoutMs: number, timers: Timers = systemTimers) {
    if (!(timeoutMs > 0)) {
      throw new RangeError(`Send timeout must be a positive duration, got ${timeoutMs} ms`);
    }
    this.#timers = timers;
  }

  /** Sends being timed. */
  get size(): number {
    return this.#pending.size;
  }

  /**
   * Calls `onExpire` once, `timeoutMs` from now, unless the returned function is called first (calling it
   * later does nothing).
   */
  start(onExpire: () => void): () => void {
    const deadline: Deadline = { at: this.#timers.now() + this.timeoutMs, onExpire };
    this.#pending.add(deadline);
    if (this.#timer === undefined) this.#arm(deadline.at);
    return () => {
      if (!this.#pending.delete(deadline) || this.#pending.size > 0 || this.#timer === EXPIRING) return;
      // Nothing left to time: no timer keeps the process awake. A cancelled head otherwise only costs one
      // early wake-up, which re-arms for the next deadline.
      this.#timers.clearTimeout(this.#timer);
      this.#timer = undefined;
    };
  }

  #arm(at: number): void {
    this.#timer = this.#timers.setTimeout(() => this.#expire(), Math.max(0, at - this.#timers.now()));
  }

  #expire(): void {
    this.#timer = EXPIRING;
    const now = this.#timers.now();
    try {
      for (const deadline of this.#pending) {
        if (deadline.at > now) break;
        this.#pending.delete(deadline);
        deadline.onExpire();
      }
    } finally {
      this.#timer = undefined;
      const next = this.#pending.values().next();
      if (!next.done) this.#arm(next.value.at);
    }
  }
}
