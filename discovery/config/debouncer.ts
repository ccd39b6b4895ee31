import { systemTimers, type Timers } from "@mesh/shared/time/timers";

/** Options of {@link Debouncer}. */
export interface DebouncerOptions {
  /** Quiet period: the action runs this long after the last trigger. */
  readonly delayMs: number;
  /** Upper bound from the first trigger of a burst, so a file written continuously still gets loaded. */
  readonly maxDelayMs?: number;
  readonly timers?: Timers;
}

/** Runs an action once after a burst of triggers has been quiet for `delayMs` (or `maxDelayMs` passed). */
export class Debouncer {
  readonly #action: () => void;
  readonly #delayMs: number;
  readonly #maxDelayMs: number;
  readonly #timers: Timers;
  #timer: unknown;
  #burstStart: number | undefined;
  /** When the scheduled run is due: the last trigger plus the delay, capped by the burst's maximum. */
  #dueAt = 0;

  constructor(action: () => void, options: DebouncerOptions) {
    if (!(options.delayMs >= 0)) {
      throw new RangeError(`Debounce delay must be at least 0 ms, got ${options.delayMs}`);
    }
    this.#action = action;
    this.#delayMs = options.delayMs;
    this.#maxDelayMs = Math.max(options.maxDelayMs ?? options.delayMs * 10, options.delayMs);
    this.#timers = options.timers ?? systemTimers;
  }

  /** True while a run is scheduled. */
  get pending(): boolean {
    return this.#burstStart !== undefined;
  }

  /**
   * Schedules the action, postponing an already scheduled run (never beyond the burst's maximum delay). A
   * burst arms one timer: a trigger only moves the due time, and the timer, when it fires early, waits out
   * the rest: thousands of files written at once are thousands of triggers, and each re-armed a timer.
   */
  trigger(): void {
    const now = this.#timers.now();
    this.#burstStart ??= now;
    this.#dueAt = Math.min(now + this.#delayMs, this.#burstStart + this.#maxDelayMs);
    if (this.#timer === undefined) this.#arm(now);
  }

  #arm(now: number): void {
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      const firedAt = this.#timers.now();
      if (firedAt < this.#dueAt) {
        this.#arm(firedAt);
        return;
      }
      this.#burstStart = undefined;
      this.#action();
    }, Math.max(0, this.#dueAt - now));
  }

  /** Cancels a scheduled run. */
  cancel(): void {
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#burstStart = undefined;
  }
}
