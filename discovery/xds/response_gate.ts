/**
 * The response gate: every ADS response, pushed or asked for, is built and sent while holding one of
 * `DISCOVERY_PUSH_THROTTLE` permits, so a thousand proxies connecting at once hold at most that many built
 * responses (and their bytes in the transport) at a time, as a push does. Permits are granted in arrival
 * order, and holders start one per turn of the event loop: between the starts of two responses the transport
 * gets to write, so the first bytes of a push leave while the rest is still being built.
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

/** A FIFO counting semaphore over response work that yields to the event loop before each holder runs. */
export class ResponseGate {
  readonly #permits: number;
  readonly #yield: YieldToLoop;
  readonly #waiting: (() => void)[] = [];
  /** Holders with a permit waiting for their turn of the loop; one is let in per turn. */
  readonly #ready: (() => void)[] = [];
  #turnScheduled = false;
  #running = 0;

  /** Throws RangeError when `permits` is below 1. */
  constructor(permits: number, yieldTo: YieldToLoop = yieldToLoop) {
    if (!(permits >= 1)) {
      throw new RangeError(`Invalid response gate size "${permits}": expected at least 1 permit`);
    }
    this.#permits = permits;
    this.#yield = yieldTo;
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

  /** Queues a holder for its turn; turns are handed out one per turn of the event loop. */
  #enter(granted: () => void): void {
    this.#ready.push(granted);
    this.#scheduleTurn();
  }

  #scheduleTurn(): void {
    if (this.#turnScheduled || this.#ready.length === 0) return;
    this.#turnScheduled = true;
    this.#yield(() => {
      this.#turnScheduled = false;
      this.#ready.shift()?.();
      this.#scheduleTurn();
    });
  }

  /** How many responses are running and waiting. */
  stats(): ResponseGateStats {
    return { running: this.#running, waiting: this.#waiting.length };
  }
}
