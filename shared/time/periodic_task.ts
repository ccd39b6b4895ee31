/**
 * Work run on a period, one run at a time: the next period starts when a run ends (at once for a synchronous
 * run, when its promise settles for an asynchronous one), so a slow run is never overlapped by the next, and
 * `stop()` waits for the run in progress. A run that throws or rejects does not
 * end the schedule; what to say about the failure is the run's business.
 *
 * @module
 */
import { systemTimers, type Timers } from "./timers.ts";

/** Calls `run` every `periodMs` from `start()` until `stop()`. */
export class PeriodicTask {
  readonly #timers: Timers;
  #timer: unknown;
  #running: Promise<void> | undefined;
  #stopped = true;

  /** @throws {RangeError} when `periodMs` is not a positive finite number; `what` names it in the message */
  constructor(
    readonly what: string,
    readonly periodMs: number,
    private readonly run: () => void | Promise<void>,
    timers: Timers = systemTimers,
  ) {
    if (!(periodMs > 0) || !Number.isFinite(periodMs)) {
      throw new RangeError(`${what} period "${periodMs}" ms: expected a positive number`);
    }
    this.#timers = timers;
  }

  /** Schedules the first run one period from now; idempotent. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#schedule();
  }

  /** Cancels the next run and waits for one in progress; idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timers.clearTimeout(this.#timer);
    await this.#running;
  }

  #schedule(): void {
    this.#timer = this.#timers.setTimeout(() => {
      let result: void | Promise<void> = undefined;
      try {
        result = this.run();
      } catch {
        // The run reports its own failures; the schedule goes on.
      }
      if (result instanceof Promise) {
        // The next period starts when this run ends.
        this.#running = result.catch(() => {}).finally(() => {
          this.#running = undefined;
          this.#next();
        });
      } else {
        this.#next();
      }
    }, this.periodMs);
  }

  #next(): void {
    if (!this.#stopped) this.#schedule();
  }
}
