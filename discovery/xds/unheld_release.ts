/**
 * Releases what the server memoised for streams that are gone: every period it asks the server to sweep its
 * encoded-resource cache and shape memo ({@link XdsCache.sweep}, {@link ShapeMemo.sweep}). An entry no connected
 * stream holds or read goes between two and three periods after its last use; with the default period of
 * 15 s, a proxy that reconnects within 30 s still finds its resources, and what a flood of streams left is
 * released within 45 s of their leaving. Without it, such entries stayed until a config change evicted them.
 *
 * @module
 */
import { systemTimers, type Timers } from "@mesh/shared/time/timers";

/** Milliseconds between sweeps: entries go between two and three periods after their last use. */
export const UNHELD_RELEASE_PERIOD_MS = 15_000;

/** Calls `sweep` every `periodMs` from `start()` until `stop()`. */
export class UnheldRelease {
  readonly #timers: Timers;
  #timer: unknown;
  #running = false;

  /** @throws {RangeError} when `periodMs` is not a positive finite number */
  constructor(
    private readonly sweep: () => void,
    private readonly periodMs: number = UNHELD_RELEASE_PERIOD_MS,
    timers: Timers = systemTimers,
  ) {
    if (!(periodMs > 0) || !Number.isFinite(periodMs)) {
      throw new RangeError(`Invalid release period "${periodMs}" ms: expected a positive number`);
    }
    this.#timers = timers;
  }

  /** Schedules the first sweep one period from now; idempotent. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#schedule();
  }

  /** Cancels the next sweep; idempotent. */
  stop(): void {
    this.#running = false;
    this.#timers.clearTimeout(this.#timer);
  }

  #schedule(): void {
    this.#timer = this.#timers.setTimeout(() => {
      if (!this.#running) return;
      try {
        this.sweep();
      } finally {
        this.#schedule();
      }
    }, this.periodMs);
  }
}
