import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "../testing/fake_timers.ts";
import { SlotWaiters } from "./slot_waiters.ts";

Deno.test("SlotWaiters places waiting connections in order of arrival per address, the others not held up", () => {
  const waiters = new SlotWaiters(10, 1_000, timersOf(FakeTimers.createClock()));
  const placed: string[] = [];
  let roomFor = new Set<string>();
  const wait = (peer: string, name: string) =>
    waiters.wait(
      peer,
      () => roomFor.has(name) && placed.push(name) > 0,
      () => placed.push(`refused ${name}`),
    );
  wait("a", "a1");
  wait("a", "a2");
  wait("b", "b1");
  roomFor = new Set(["a2", "b1"]);
  waiters.offer();
  assert.deepEqual(placed, ["b1"], "a2 waits behind a1; b1 is not held up by address a");
  roomFor = new Set(["a1", "a2"]);
  waiters.offer();
  assert.deepEqual(placed, ["b1", "a1", "a2"]);
  assert.equal(waiters.size, 0);
});

Deno.test("SlotWaiters refuses a connection past its deadline, and newcomers past the bound", () => {
  const clock = FakeTimers.createClock();
  const waiters = new SlotWaiters(2, 1_000, timersOf(clock));
  const refused: string[] = [];
  assert.ok(waiters.wait("a", () => false, () => refused.push("a1")));
  clock.tick(500);
  assert.ok(waiters.wait("a", () => false, () => refused.push("a2")));
  assert.equal(waiters.wait("b", () => false, () => refused.push("b1")), false, "two are waiting already");
  clock.tick(500);
  assert.deepEqual(refused, ["a1"]);
  assert.equal(waiters.size, 1);
  waiters.closeAll();
  assert.deepEqual(refused, ["a1", "a2"]);
  clock.tick(1_000);
  assert.deepEqual(refused, ["a1", "a2"], "a closed waiter's deadline does nothing");
});
