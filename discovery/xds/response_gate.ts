/**
 * The response gate: every ADS response, pushed or asked for, is built and sent while holding one of
 * `DISCOVERY_PUSH_THROTTLE` permits, so a thousand proxies connecting at once hold at most that many built
 * responses (and their bytes in the transport) at a time, as a push does. Permits are granted in arrival
 * order, and holders start in turns of the event loop of at most `sliceMs` of building each: between two
 * slices the transport gets to write, so the first bytes of a push leave while the rest is still being built,
 * and small responses still share a turn instead of paying one each. Turns follow each other through
 * {@link pollingYield}, so a long run of them still lets the runtime accept connections and read sockets
 * (a `/ready` probe, a healthy proxy's ACK) every few slices.
 *
 * A holder must never wait for anything that itself waits for a permit (a connection's serialised work is
 * fine: only work already holding a permit is ever ahead of it).
 *
 * @module
 */
import { pollingYield, type YieldToLoop } from "@mesh/shared/time/loop_yield";

/** Work holding a permit: called with the function that returns it. */
type Holder = (release: () => void) => void;

/** Counts of the gate, for the debug interface and tests. */
export interface ResponseGateStats {
  /** Responses being built or sent. */
  readonly running: number;
  /** Responses waiting for a permit. */
  readonly waiting: number;
}

/** How the gate shares the event loop; tests pass their own. */
export interface ResponseGateOptions {
  /** How a turn of the event loop is awaited (default: {@link pollingYield} on `now`). */
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
  readonly #waiting: Holder[] = [];
  /** Holders with a permit waiting for a turn of the loop. */
  readonly #ready: Holder[] = [];
  #turnScheduled = false;
  #running = 0;

  /** Throws RangeError when `permits` is below 1. */
  constructor(permits: number, options: ResponseGateOptions = {}) {
    if (!(permits >= 1)) {
      throw new RangeError(`Invalid response gate size "${permits}": expected at least 1 permit`);
    }
    this.#permits = permits;
    this.#sliceMs = options.sliceMs ?? 4;
    this.#now = options.now ?? (() => performance.now());
    this.#yield = options.yieldTo ?? pollingYield(this.#now);
  }

  /**
   * Runs `work` once a permit is free and the event loop has had a turn; the permit is returned after. With
   * `admit`, the permit is asked for only once `admit` calls `enter`, and the `leave` it passes is called
   * when the permit is returned (a connection's turn taken before the permit, for one). One promise per run.
   */
  run<T>(work: () => Promise<T>, admit?: (enter: (leave?: () => void) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const enter = (leave?: () => void) =>
        this.hold((release) => {
          const done = () => {
            release();
            leave?.();
          };
          let running: Promise<T>;
          try {
            running = work();
          } catch (error) {
            done();
            return reject(error);
          }
          running.then((value) => {
            done();
            resolve(value);
          }, (error) => {
            done();
            reject(error);
          });
        });
      if (admit === undefined) enter();
      else admit(enter);
    });
  }

  /**
   * Calls `start` once a permit is free and the event loop has had a turn, with the function that returns
   * the permit (idempotent). `start` runs synchronously inside the gate's turn, so what it does before its
   * first await (building and handing over a response) is part of that turn's slice; it must not throw.
   */
  hold(start: (release: () => void) => void): void {
    if (this.#running < this.#permits) {
      this.#running++;
      this.#enter(start);
    } else {
      this.#waiting.push(start);
    }
  }

  #release(): void {
    const next = this.#waiting.shift();
    // The permit passes straight to the next waiter, so a newcomer never overtakes it.
    if (next !== undefined) this.#enter(next);
    else this.#running--;
  }

  /** Queues a holder for the next turn of the event loop. */
  #enter(start: Holder): void {
    this.#ready.push(start);
    this.#scheduleTurn();
  }

  #scheduleTurn(): void {
    if (this.#turnScheduled || this.#ready.length === 0) return;
    this.#turnScheduled = true;
    this.#yield(this.#turn);
  }

  /**
   * Lets holders in one after another, in one synchronous batch, until the slice is used: a holder's
   * synchronous part (building the response and handing it to the transport) runs inside the turn, so N
   * holders of one turn cost no job or promise of the gate's each. Holders that enter during the turn (a
   * permit returned synchronously) join it.
   */
  readonly #turn = (): void => {
    const started = this.#now();
    try {
      let next: Holder | undefined;
      while ((next = this.#ready.shift()) !== undefined) {
        next(this.#releaser());
        if (this.#now() - started >= this.#sliceMs) break;
      }
    } finally {
      // A holder that broke its contract and threw still leaves the gate turning for the rest.
      this.#turnScheduled = false;
      this.#scheduleTurn();
    }
  };

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#release();
    };
  }

  /** How many responses are running and waiting. */
  stats(): ResponseGateStats {
    return { running: this.#running, waiting: this.#waiting.length };
  }
}
