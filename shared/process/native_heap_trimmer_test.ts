import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "../testing/fake_timers.ts";
import { RecordingLogger } from "../testing/recording_logger.ts";
import { NativeHeapTrimmer, nativeHeapTrimming } from "./native_heap_trimmer.ts";

const MIB = 1024 * 1024;

/** A trim that resolves when the test says so, counting its calls. */
function manualTrim() {
  const pending: (() => void)[] = [];
  let calls = 0;
  return {
    trim: () => {
      calls++;
      return new Promise<boolean>((resolve) => pending.push(() => resolve(true)));
    },
    finish: () => pending.shift()!(),
    calls: () => calls,
    pending: () => pending.length,
  };
}

Deno.test("NativeHeapTrimmer trims once an interval, one trim at a time, until stopped", async () => {
  const clock = FakeTimers.createClock();
  const trim = manualTrim();
  const logger = new RecordingLogger();
  let rss = 300 * MIB;
  const trimmer = new NativeHeapTrimmer({
    intervalMs: 15_000,
    trim: () => trim.trim().finally(() => rss -= 200 * MIB),
    rssBytes: () => rss,
    timers: timersOf(clock),
    logger,
  });
  trimmer.start();
  await clock.tickAsync(14_999);
  assert.equal(trim.calls(), 0);
  await clock.tickAsync(1);
  assert.equal(trim.calls(), 1);
  // The next interval starts once the trim in progress is done.
  await clock.tickAsync(60_000);
  assert.equal(trim.calls(), 1);
  trim.finish();
  await clock.tickAsync(15_000);
  assert.equal(trim.calls(), 2);
  assert.deepEqual(logger.matching("debug", "Native heap trimmed").map((l) => l.fields?.releasedMiB), [200]);
  const stopped = trimmer.stop();
  trim.finish();
  await stopped;
  await clock.tickAsync(60_000);
  assert.equal(trim.calls(), 2);
});

Deno.test("NativeHeapTrimmer logs a failed trim and keeps its schedule", async () => {
  const clock = FakeTimers.createClock();
  const logger = new RecordingLogger();
  let calls = 0;
  const trimmer = new NativeHeapTrimmer({
    intervalMs: 1_000,
    trim: () => {
      calls++;
      return Promise.reject(new Error("malloc_trim crashed"));
    },
    rssBytes: () => 0,
    timers: timersOf(clock),
    logger,
  });
  trimmer.start();
  await clock.tickAsync(3_000);
  await trimmer.stop();
  assert.equal(calls, 3);
  assert.equal(logger.matching("warn", "Native heap trim failed").length, 3);
});

Deno.test("NativeHeapTrimmer refuses an interval that is not positive", () => {
  const options = { trim: () => Promise.resolve(true), logger: new RecordingLogger() };
  assert.throws(() => new NativeHeapTrimmer({ ...options, intervalMs: 0 }), RangeError);
  assert.throws(() => new NativeHeapTrimmer({ ...options, intervalMs: Number.NaN }), RangeError);
});

Deno.test("nativeHeapTrimming says once why it cannot trim, and does nothing", async () => {
  const clock = FakeTimers.createClock();
  const logger = new RecordingLogger();
  const component = nativeHeapTrimming(
    1_000,
    logger,
    () => ({ unavailable: "FFI is not granted" }),
    timersOf(clock),
  );
  await component.start();
  await clock.tickAsync(10_000);
  await component.stop();
  assert.deepEqual(logger.lines, [
    { level: "info", msg: "Native heap trimming is off", fields: { reason: "FFI is not granted" } },
  ]);
});

Deno.test("nativeHeapTrimming trims on its period while started, and not at all with 0", async () => {
  const clock = FakeTimers.createClock();
  const logger = new RecordingLogger();
  let calls = 0;
  let opened = 0;
  const open = () => {
    opened++;
    return { trim: () => Promise.resolve(calls++ >= 0), library: "/lib/libc.so.6" };
  };
  const component = nativeHeapTrimming(1_000, logger, open, timersOf(clock));
  await component.start();
  await clock.tickAsync(3_000);
  await component.stop();
  await clock.tickAsync(3_000);
  assert.equal(calls, 3);
  assert.deepEqual(logger.matching("info", "Native heap trimming on")[0].fields, {
    everyMs: 1_000,
    library: "/lib/libc.so.6",
  });
  const off = nativeHeapTrimming(0, logger, open, timersOf(clock));
  await off.start();
  await off.stop();
  assert.equal(opened, 1);
});
