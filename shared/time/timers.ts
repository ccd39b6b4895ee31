/**
 * The clock and one-shot timers that time-driven classes take through their constructors, so tests can
 * drive them with a fake clock.
 *
 * @module
 */

/** The clock and timer functions a component uses; the globals by default, a fake clock in tests. */
export interface Timers {
  /** Runs `callback` once after `ms` milliseconds; returns an id for `clearTimeout`. */
  setTimeout(callback: () => void, ms: number): unknown;
  /** Cancels a timer `setTimeout` returned; unknown or fired ids are ignored. */
  clearTimeout(id: unknown): void;
  /** Milliseconds on a monotonic scale. */
  now(): number;
}

/** The real timers. */
export const systemTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (id) => clearTimeout(id as number),
  now: () => performance.now(),
};
