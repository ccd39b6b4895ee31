import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import type { Timers } from "../../shared/time/timers.ts";
import { SendDeadlines } from "./send_deadlines.ts";

function fakeTimers(clock: FakeTimers.Clock): Timers {
  return {
    setTimeout: (callback, ms) => clock.setTimeout(callback, ms),
    clearTimeout: (id) => clock.clearTimeout(id as FakeTimers.TimerId),
    now: () => clock.now,
  };
}

Deno.test("SendDeadlines expires each send at its own deadline, on one timer", () => {
  const clock = FakeTimers.createClock();
  const deadlines = new SendDeadlines(100, fakeTimers(clock));
  const expired: string[] = [];
  deadlines.start(() => expired.push("a"));
  clock.tick(10);
  const doneB = deadlines.start(() => expired.push("b"));
  clock.tick(10);
  deadlines.start(() => expired.push("c"));
  assert.equal(clock.countTimers(), 1, "one timer for three sends");

  doneB();
  clock.tick(79);
  assert.deepEqual(expired, [], "nothing before the first deadline");
  clock.tick(1);
  assert.deepEqual(expired, ["a"], "the first at 100 ms");
  clock.tick(10);
  assert.deepEqual(expired, ["a"], "the finished send never expires");
  clock.tick(10);
  assert.deepEqual(expired, ["a", "c"], "the third at its own 100 ms");
  assert.equal(deadlines.size, 0);
  assert.equal(clock.countTimers(), 0, "no timer left once nothing is timed");
});

Deno.test("SendDeadlines keeps no timer once every send is done, and a late done is harmless", () => {
  const clock = FakeTimers.createClock();
  const deadlines = new SendDeadlines(50, fakeTimers(clock));
  const expired: number[] = [];
  const done = deadlines.start(() => expired.push(1));
  done();
  assert.equal(clock.countTimers(), 0);
  const expiring = deadlines.start(() => expired.push(2));
  clock.tick(50);
  expiring();
  done();
  assert.deepEqual(expired, [2]);
  assert.throws(() => new SendDeadlines(0), RangeError);
});

Deno.test("SendDeadlines times a send started by an expiry callback from its own start", () => {
  const clock = FakeTimers.createClock();
  const deadlines = new SendDeadlines(100, fakeTimers(clock));
  const expired: string[] = [];
  deadlines.start(() => {
    expired.push("first");
    deadlines.start(() => expired.push("second"));
  });
  clock.tick(100);
  assert.deepEqual(expired, ["first"]);
  assert.equal(clock.countTimers(), 1, "the send started while expiring is timed by one timer");
  clock.tick(99);
  assert.deepEqual(expired, ["first"]);
  clock.tick(1);
  assert.deepEqual(expired, ["first", "second"]);
});
