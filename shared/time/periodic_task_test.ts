import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "../testing/fake_timers.ts";
import { PeriodicTask } from "./periodic_task.ts";

Deno.test("PeriodicTask runs a synchronous run once a period from start until stop", () => {
  const clock = FakeTimers.createClock();
  let runs = 0;
  const task = new PeriodicTask("Count", 1000, () => void runs++, timersOf(clock));
  clock.tick(5000);
  assert.equal(runs, 0, "nothing runs before start");
  task.start();
  task.start();
  clock.tick(999);
  assert.equal(runs, 0);
  clock.tick(1);
  assert.equal(runs, 1);
  clock.tick(3000);
  assert.equal(runs, 4, "a second start schedules nothing more");
  void task.stop();
  clock.tick(5000);
  assert.equal(runs, 4);
});

Deno.test("PeriodicTask starts the next period when an asynchronous run ends, and stop waits for it", async () => {
  const clock = FakeTimers.createClock();
  const finishers: (() => void)[] = [];
  let runs = 0;
  const task = new PeriodicTask("Slow", 1000, () => {
    runs++;
    return new Promise<void>((resolve) => finishers.push(resolve));
  }, timersOf(clock));
  task.start();
  await clock.tickAsync(10_000);
  assert.equal(runs, 1, "no run overlaps the one in progress");
  finishers.shift()!();
  await clock.tickAsync(999);
  assert.equal(runs, 1, "the period counts from the end of the run");
  await clock.tickAsync(1);
  assert.equal(runs, 2);
  let stopped = false;
  const stopping = task.stop().then(() => stopped = true);
  await clock.tickAsync(0);
  assert.equal(stopped, false, "stop waits for the run in progress");
  finishers.shift()!();
  await stopping;
  await clock.tickAsync(10_000);
  assert.equal(runs, 2);
});

Deno.test("PeriodicTask keeps its schedule after a run throws or rejects", async () => {
  const clock = FakeTimers.createClock();
  let runs = 0;
  const throwing = new PeriodicTask("Throwing", 100, () => {
    runs++;
    throw new Error("run failed");
  }, timersOf(clock));
  throwing.start();
  clock.tick(300);
  assert.equal(runs, 3);
  await throwing.stop();
  let rejections = 0;
  const rejecting = new PeriodicTask("Rejecting", 100, () => {
    rejections++;
    return Promise.reject(new Error("run failed"));
  }, timersOf(clock));
  rejecting.start();
  await clock.tickAsync(300);
  assert.equal(rejections, 3);
  await rejecting.stop();
});

Deno.test("PeriodicTask refuses a period that is not a positive finite number, naming what it is for", () => {
  for (const period of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => new PeriodicTask("Release", period, () => {}), (error: unknown) => {
      assert.ok(error instanceof RangeError);
      assert.match(error.message, /^Release period ".*" ms: expected a positive number$/);
      return true;
    });
  }
});
