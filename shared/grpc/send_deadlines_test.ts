import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "../testing/fake_timers.ts";
import { type Expiring, SendDeadlines } from "./send_deadlines.ts";

/** A send that records its expiry under `name` in `expired`. */
function sendNamed(name: string, expired: string[]): Expiring {
  return { expire: () => expired.push(name) };
}

Deno.test("One timer keeps every send's deadline, each expiring in its turn unless settled first", () => {
  const clock = FakeTimers.createClock(0);
  const deadlines = new SendDeadlines(1000, timersOf(clock));
  const expired: string[] = [];
  const sends = new Map<string, Expiring>();
  for (const name of ["a", "b", "c"]) sends.set(name, sendNamed(name, expired));
  for (const name of ["a", "b", "c"]) deadlines.track(sends.get(name)!);
  clock.tick(400);
  for (const name of ["d", "e"]) sends.set(name, sendNamed(name, expired));
  for (const name of ["d", "e"]) deadlines.track(sends.get(name)!);
  assert.equal(clock.countTimers(), 1, "five sends in progress, one timer");
  deadlines.untrack(sends.get("b")!);
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
  const a = sendNamed("a", expired);
  deadlines.track(a);
  deadlines.untrack(a);
  assert.equal(clock.countTimers(), 0);
  clock.tick(5000);
  deadlines.track(sendNamed("b", expired));
  clock.tick(999);
  assert.deepEqual(expired, []);
  clock.tick(1);
  assert.deepEqual(expired, ["b"]);
});

Deno.test("Untracking a send that expired or was never tracked leaves the others' deadlines and timer", () => {
  const clock = FakeTimers.createClock(0);
  const deadlines = new SendDeadlines(1000, timersOf(clock));
  const expired: string[] = [];
  const a = sendNamed("a", expired);
  deadlines.track(a);
  clock.tick(500);
  deadlines.track(sendNamed("b", expired));
  clock.tick(500);
  deadlines.untrack(a);
  deadlines.untrack(sendNamed("never", expired));
  assert.equal(clock.countTimers(), 1, "b's deadline still armed");
  clock.tick(500);
  assert.deepEqual(expired, ["a", "b"]);
});

Deno.test("SendDeadlines refuses a timeout that is not positive", () => {
  assert.throws(() => new SendDeadlines(0), RangeError);
});
