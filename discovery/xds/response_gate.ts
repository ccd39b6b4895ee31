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
 * A holder's work too long for one slice (a whole-mesh response) runs through {@link ResponseGate.inSlices}:
 * its steps run while the turn's slice lasts and go on in later turns, behind the holders already let in, so
 * no single response fills a turn and a probe waits behind at most a few slices. (Not `LoopSlices`: a step
 * here counts against the turn's slice, shared by every holder, and resumes in the gate's chain of turns.)
 *
 * A holder must never wait for anything that itself waits for a permit (a connection's serialised work is
 * fine: only work already holding a permit is ever ahead of it).
 *
 * @module
 */
import { pollingYield, type YieldToLoop } from "@mesh/shared/time/loop_yield";

/** Work holding a permit: called with the function that returns it. */
type Holder = (release: () => void) => void;

/** Something a turn runs: a holder let in, or the next slice of a holder's steps. */
type Ready = () => void;

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
  /** Holders with a permit, and slices of their steps, waiting for a turn of the loop. */
  readonly #ready: Ready[] = [];
  #turnScheduled = false;
  /** When the slice of the running turn, or of the last one, ends (on `now`). */
  #sliceEnds = -Infinity;
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

  /**
   * Runs `steps` to their end in the slices of the gate's turns, for a holder's work too long for one: they
   * run now while the current slice lasts (outside a turn: the last turn's slice, so work resumed by I/O
   * waits for the next turn), at least one each time, and the rest in later turns, queued behind holders
   * already waiting. Resolves with what the steps return; rejects with what a step throws.
   */
  inSlices<T>(steps: Iterator<unknown, T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const slice = (): void => {
        try {
          for (;;) {
            const step = steps.next();
            if (step.done) return resolve(step.value);
            if (this.#now() >= this.#sliceEnds) break;
          }
        } catch (error) {
          return reject(error);
        }
        this.#ready.push(slice);
        this.#scheduleTurn();
      };
      slice();
    });
  }

  #release(): void {
    const next = this.#waiting.shift();
    // The permit passes straight to the next waiter, so a newcomer never overtakes it.
    if (next !== undefined) this.#enter(next);
    else this.#running--;
  }

  /** Queues a holder for the next turn of the event loop. */
  #enter(start: Holder): void {
    this.#ready.push(() => start(this.#releaser()));
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
    this.#sliceEnds = started + this.#sliceMs;
    try {
      let next: Ready | undefined;
      while ((next = this.#ready.shift()) !== undefined) {
        next();
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
