/**
 * The clock and timers that time-based code takes through its constructor: the runtime's by default, a fake
 * clock in tests.
 *
 * @module
 */

/** The clock and timer functions a component uses. */
export interface Timers {
  /** Runs `callback` once after `ms` milliseconds; returns an id for `clearTimeout`. */
  setTimeout(callback: () => void, ms: number): unknown;
  /** Cancels a timer `setTimeout` returned; unknown or fired ids are ignored. */
  clearTimeout(id: unknown): void;
  /** Milliseconds on a monotonic scale: never steps when the wall clock is set. */
  now(): number;
}

/** The runtime's timers, with `performance.now()` as the clock. */
export const systemTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (id) => clearTimeout(id as number),
  now: () => performance.now(),
};
