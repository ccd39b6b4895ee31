import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { Debouncer } from "./debouncer.ts";
import { timersOf } from "@mesh/shared/testing/fake_timers";

Deno.test("Debouncer runs once after a burst has been quiet for the delay", async (t) => {
  const clock = FakeTimers.createClock();
  let runs = 0;
  const debouncer = new Debouncer(() => runs++, {
    delayMs: 100,
    maxDelayMs: 1000,
    timers: timersOf(clock),
  });

  await t.step("three triggers within 100 ms cause one run, 100 ms after the last", () => {
    debouncer.trigger();
    clock.tick(50);
    debouncer.trigger();
    clock.tick(50);
    debouncer.trigger();
    clock.tick(99);
    assert.equal(runs, 0);
    assert.equal(debouncer.pending, true);
    clock.tick(1);
    assert.equal(runs, 1);
    assert.equal(debouncer.pending, false);
  });

  await t.step("nothing runs without a trigger", () => {
    clock.tick(10_000);
    assert.equal(runs, 1);
  });

  await t.step("cancel drops a scheduled run", () => {
    debouncer.trigger();
    debouncer.cancel();
    clock.tick(1000);
    assert.equal(runs, 1);
  });
});

Deno.test("Debouncer runs at the latest after the maximum delay while triggers keep coming", () => {
  const clock = FakeTimers.createClock();
  const runsAt: number[] = [];
  const debouncer = new Debouncer(() => runsAt.push(clock.now), {
    delayMs: 100,
    maxDelayMs: 300,
    timers: timersOf(clock),
  });
  for (let i = 0; i < 10; i++) {
    debouncer.trigger();
    clock.tick(50);
  }
  clock.tick(1000);
  // The first burst is cut at 300 ms; the second (triggers at 300..450 ms) ends quietly 100 ms after its last.
  assert.deepEqual(runsAt, [300, 550]);
});

Deno.test("Debouncer rejects a negative delay", () => {
  assert.throws(() => new Debouncer(() => {}, { delayMs: -1 }), RangeError);
});

Deno.test("Debouncer arms one timer for a burst of triggers, however many come", () => {
  const clock = FakeTimers.createClock();
  const timers = timersOf(clock);
  let armed = 0;
  let runs = 0;
  const debouncer = new Debouncer(() => runs++, {
    delayMs: 100,
    maxDelayMs: 1000,
    timers: {
      ...timers,
      setTimeout: (callback, ms) => {
        armed++;
        return timers.setTimeout(callback, ms);
      },
    },
  });
  for (let i = 0; i < 1000; i++) debouncer.trigger();
  clock.tick(100);
  assert.equal(runs, 1);
  assert.equal(armed, 1);
});
