/**
 * Test support: a fake clock as the connection guard's timers, counting the timers it arms, so a test can wait
 * for the guard to act (it arms one for every chunk it relays) before moving the clock.
 *
 * @module
 */
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "../testing/fake_timers.ts";
import type { Timers } from "../time/timers.ts";

/** A fake clock, the guard's timers on it, and how many timers the guard has armed so far. */
export function guardClock(): { clock: FakeTimers.Clock; timers: Timers; armed: () => number } {
  const clock = FakeTimers.createClock();
  const fake = timersOf(clock);
  let armed = 0;
  const timers: Timers = {
    ...fake,
    setTimeout: (callback, ms) => {
      armed++;
      return fake.setTimeout(callback, ms);
    },
  };
  return { clock, timers, armed: () => armed };
}
