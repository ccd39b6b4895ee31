/**
 * Test support: a `@sinonjs/fake-timers` clock as the `Timers` that time-based code takes.
 *
 * @module
 */
import type FakeTimers from "@sinonjs/fake-timers";
import type { Timers } from "../time/timers.ts";

/** `clock` as `Timers`: its timers, and its time as the monotonic clock. */
export function timersOf(clock: FakeTimers.Clock): Timers {
  return {
    setTimeout: (callback, ms) => clock.setTimeout(callback, ms),
    clearTimeout: (id) => clock.clearTimeout(id as FakeTimers.TimerId),
    now: () => clock.now,
  };
}
