/**
 * Releases what the server memoised for streams that are gone: every period it asks the server to sweep its
 * encoded-resource cache and shape memo ({@link XdsCache.sweep}, {@link ShapeMemo.sweep}). An entry no connected
 * stream holds or read goes between two and three periods after its last use; with the default period of
 * 15 s, a proxy that reconnects within 30 s still finds its resources, and what a flood of streams left is
 * released within 45 s of their leaving. Without it, such entries stayed until a config change evicted them.
 *
 * @module
 */
import type { Timers } from "@mesh/shared/time/timers";
import { PeriodicTask } from "@mesh/shared/time/periodic_task";

/** Milliseconds between sweeps: entries go between two and three periods after their last use. */
export const UNHELD_RELEASE_PERIOD_MS = 15_000;

/** Calls `sweep` every `periodMs` from `start()` until `stop()`. */
export class UnheldRelease extends PeriodicTask {
  /** @throws {RangeError} when `periodMs` is not a positive finite number */
  constructor(sweep: () => void, periodMs: number = UNHELD_RELEASE_PERIOD_MS, timers?: Timers) {
    super("Unheld release", periodMs, sweep, timers);
  }
}
