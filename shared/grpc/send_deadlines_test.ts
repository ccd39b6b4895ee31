import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "../testing/fake_timers.ts";
import { SendDeadlines } from "./send_deadlines.ts";

Deno.test("One timer keeps every send's deadline, each expiring in its turn unless settled first", () => {
  const clock = FakeTimers.createClock(0);
  const deadlines = new SendDeadlines(1000, timersOf(clock));
  const expired: string[] = [];
  const settle = new Map<string, () => void>();
  for (const name of ["a", "b", "c"]) settle.set(name, deadlines.add(() => expired.push(name)));
  clock.tick(400);
  for (const name of ["d", "e"]) settle.set(name, deadlines.add(() => expired.push(name)));
  assert.equal(clock.countTimers(), 1, "five sends in progress, one timer");
  settle.get("b")!();
  clock.tick(600);
  assert.deepEqual(expired, ["a", "c"], "the first three expire at 1000 ms, but b was settled");
  assert.equal(clock.countTimers(), 1, "armed again for the next deadline");
  clock.tick(399);
  assert.deepEqual(expired, ["a", "c"]);
  clock.tick(1);
  assert.deepEqual(expired, ["a", "c", "d", "e"]);
  assert.equal(clock.countTimers(), 0, "nothing pending, no timer");
  assert.equal(deadlines.size, 0);
});

Deno.test("The last send settling clears the timer, and a later send arms it afresh", () => {
  const clock = FakeTimers.createClock(0);
  const deadlines = new SendDeadlines(1000, timersOf(clock));
  const expired: string[] = [];
  deadlines.add(() => expired.push("a"))();
  assert.equal(clock.countTimers(), 0);
  clock.tick(5000);
  deadlines.add(() => expired.push("b"));
  clock.tick(999);
  assert.deepEqual(expired, []);
  clock.tick(1);
  assert.deepEqual(expired, ["b"]);
});

Deno.test("SendDeadlines refuses a timeout that is not positive", () => {
  assert.throws(() => new SendDeadlines(0), RangeError);
});
