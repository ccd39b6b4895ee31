/**
 * The response gate: every ADS response, pushed or asked for, is built and sent while holding one of
 * `DISCOVERY_PUSH_THROTTLE` permits, so a thousand proxies connecting at once hold at most that many built
 * responses (and their bytes in the transport) at a time, as a push does. Permits are granted in arrival
 * order, and holders start in turns of the event loop of at most `sliceMs` of building each: between two
 * slices the transport gets to write, so the first bytes of a push leave while the rest is still being built,
 * and small responses still share a turn instead of paying one each.
 *
 * A holder must never wait for anything that itself waits for a permit (a connection's serialised work is
 * fine: only work already holding a permit is ever ahead of it).
 *
 * @module
 */
import { setImmediate } from "node:timers";

/** Lets the event loop run (I/O included) before calling `next`. */
export type YieldToLoop = (next: () => void) => void;

/** Waits for the check phase of the event loop, after pending I/O. */
export const yieldToLoop: YieldToLoop = (next) => {
  setImmediate(next);
};

/** Counts of the gate, for the debug interface and tests. */
export interface ResponseGateStats {
  /** Responses being built or sent. */
  readonly running: number;
  /** Responses waiting for a permit. */
  readonly waiting: number;
}

/** How the gate shares the event loop; tests pass their own. */
export interface ResponseGateOptions {
  /** How a turn of the event loop is awaited (default: the check phase, after I/O). */
  readonly yieldTo?: YieldToLoop;
  /** Building time after which a turn ends and the loop runs again (default 4 ms). */
  readonly sliceMs?: number;
  /** Monotonic milliseconds (default `performance.now`). */
  readonly now?: () => number;
}

/** A FIFO counting semaphore over response work that lets the event loop run between slices of it. */
export class ResponseGate {
  readonly #permits: number;
  readonly #yield: YieldToLoop;
  readonly #sliceMs: number;
  readonly #now: () => number;
  readonly #waiting: (() => void)[] = [];
  /** Holders with a permit waiting for a turn of the loop. */
  readonly #ready: (() => void)[] = [];
  #turnScheduled = false;
  #running = 0;

  /** Throws RangeError when `permits` is below 1. */
  constructor(permits: number, options: ResponseGateOptions = {}) {
    if (!(permits >= 1)) {
      throw new RangeError(`Invalid response gate size "${permits}": expected at least 1 permit`);
    }
    this.#permits = permits;
    this.#yield = options.yieldTo ?? yieldToLoop;
    this.#sliceMs = options.sliceMs ?? 4;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Runs `work` once a permit is free and the event loop has had a turn; the permit is returned after. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await new Promise<void>((granted) => {
      if (this.#running < this.#permits) {
        this.#running++;
        this.#enter(granted);
      } else {
        this.#waiting.push(() => this.#enter(granted));
      }
    });
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      // The permit passes straight to the next waiter, so a newcomer never overtakes it.
      if (next !== undefined) next();
      else this.#running--;
    }
  }

  /** Queues a holder for the next turn of the event loop. */
  #enter(granted: () => void): void {
    this.#ready.push(granted);
    this.#scheduleTurn();
  }

  #scheduleTurn(): void {
    if (this.#turnScheduled || this.#ready.length === 0) return;
    this.#turnScheduled = true;
    this.#yield(() => this.#turn(this.#now()));
  }

  /**
   * Lets holders in one after another until the slice is used. A holder's synchronous part (building the
   * response and handing it to the transport) runs in the job its grant queues, before the job queued next.
   */
  #turn(started: number): void {
    const next = this.#ready.shift();
    if (next === undefined) {
      this.#turnScheduled = false;
      return;
    }
    next();
    queueMicrotask(() => {
      if (this.#now() - started < this.#sliceMs) return this.#turn(started);
      this.#turnScheduled = false;
      this.#scheduleTurn();
    });
  }

  /** How many responses are running and waiting. */
  stats(): ResponseGateStats {
    return { running: this.#running, waiting: this.#waiting.length };
  }
}
