import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { KeyedWorkQueue } from "./work_queue.ts";

Deno.test("KeyedWorkQueue retries a failing key after a doubling backoff and runs a key added while it runs once more", async () => {
  const clock = FakeTimers.createClock();
  const runs: number[] = [];
  let failures = 2;
  const log = new RecordingLogger();
  const queue = new KeyedWorkQueue(
    () => {
      runs.push(clock.now);
      if (failures-- > 0) return Promise.reject(new Error("API server said no"));
      return Promise.resolve();
    },
    log,
    { retryMs: 1_000, timers: timersOf(clock) },
  );
  queue.add("a");
  await queue.idle();
  assert.deepEqual(runs, [0]);
  await clock.tickAsync(999);
  assert.deepEqual(runs, [0], "not before the first delay");
  await clock.tickAsync(1);
  await queue.idle();
  assert.deepEqual(runs, [0, 1_000]);
  await clock.tickAsync(2_000);
  await queue.idle();
  assert.deepEqual(runs, [0, 1_000, 3_000], "the second delay doubled");
  assert.equal(log.lines.filter((l) => l.msg === "orchestrator write failed; retrying").length, 2);

  runs.length = 0;
  queue.add("a");
  queue.add("a");
  queue.add("a");
  await queue.idle();
  assert.deepEqual(runs, [3_000, 3_000], "added twice while it ran: it runs once more, not twice");
  await queue.stop();
});
