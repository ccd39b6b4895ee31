import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "../testing/fake_timers.ts";
import { RecordingLogger } from "../testing/recording_logger.ts";
import {
  CollectionAfterDrop,
  collectionAfterDrop,
  DROP_CHECK_PERIOD_MS,
  exposedFullCollection,
  MIN_COLLECTION_GAP_MS,
} from "./collection_after_drop.ts";

function setUp(minDrop = 256) {
  const clock = FakeTimers.createClock();
  const logger = new RecordingLogger();
  const state = { count: 0, peak: 0, collections: 0 };
  const watcher = new CollectionAfterDrop({
    counts: () => {
      const counts = { now: state.count, peak: Math.max(state.count, state.peak) };
      state.peak = 0;
      return counts;
    },
    collect: () => state.collections++,
    minDrop,
    timers: timersOf(clock),
    logger,
  });
  return { clock, logger, state, watcher };
}

Deno.test("CollectionAfterDrop collects once after streams fell far and stayed down for two checks", async () => {
  const { clock, logger, state, watcher } = setUp();
  watcher.start();
  state.count = 513;
  await clock.tickAsync(DROP_CHECK_PERIOD_MS);
  state.count = 1;
  await clock.tickAsync(DROP_CHECK_PERIOD_MS);
  assert.equal(state.collections, 0, "one check after the fall is not yet staying down");
  await clock.tickAsync(DROP_CHECK_PERIOD_MS);
  assert.equal(state.collections, 1);
  await clock.tickAsync(10 * MIN_COLLECTION_GAP_MS);
  assert.equal(state.collections, 1, "the high-water mark starts again from the count after a collection");
  assert.deepEqual(
    logger.matching("info", "Collected the heap after a drop").map((l) => [l.fields?.from, l.fields?.to]),
    [[513, 1]],
  );
  watcher.stop();
});

Deno.test("CollectionAfterDrop sees a burst that came and went between two checks by its peak", async () => {
  const { clock, state, watcher } = setUp();
  watcher.start();
  // 513 streams opened and closed within one period: the count read at each check is 0 throughout.
  state.peak = 513;
  await clock.tickAsync(3 * DROP_CHECK_PERIOD_MS);
  assert.equal(state.collections, 1);
  watcher.stop();
});

Deno.test("CollectionAfterDrop leaves a steady or slightly shrinking count alone", async () => {
  const { clock, state, watcher } = setUp();
  watcher.start();
  state.count = 2_000;
  await clock.tickAsync(DROP_CHECK_PERIOD_MS);
  // Down by more than the drop, but not to half of the high-water mark: a fleet that scaled in a little.
  state.count = 1_500;
  await clock.tickAsync(10 * DROP_CHECK_PERIOD_MS);
  // Halved, but by fewer streams than the drop.
  const small = setUp();
  small.watcher.start();
  small.state.count = 300;
  await small.clock.tickAsync(DROP_CHECK_PERIOD_MS);
  small.state.count = 100;
  await small.clock.tickAsync(10 * DROP_CHECK_PERIOD_MS);
  assert.equal(state.collections, 0);
  assert.equal(small.state.collections, 0);
  watcher.stop();
  small.watcher.stop();
});

Deno.test("CollectionAfterDrop collects at most once a minute while a fleet churns", async () => {
  const { clock, state, watcher } = setUp();
  watcher.start();
  for (let i = 0; i < 12; i++) {
    state.count = 600;
    await clock.tickAsync(DROP_CHECK_PERIOD_MS);
    state.count = 0;
    await clock.tickAsync(2 * DROP_CHECK_PERIOD_MS);
  }
  assert.equal(state.collections, 6, "12 falls in 6 minutes, one collection a minute");
  watcher.stop();
  const before = state.collections;
  state.count = 600;
  await clock.tickAsync(DROP_CHECK_PERIOD_MS);
  state.count = 0;
  await clock.tickAsync(10 * MIN_COLLECTION_GAP_MS);
  assert.equal(state.collections, before, "nothing after stop");
});

Deno.test("collectionAfterDrop is off at 0 and without an exposed gc, and says why once", async () => {
  const clock = FakeTimers.createClock();
  const logger = new RecordingLogger();
  let collections = 0;
  let count = 1_000;
  const counts = () => ({ now: count, peak: count });
  const off = collectionAfterDrop(0, counts, () => collections++, logger, timersOf(clock));
  const unexposed = collectionAfterDrop(256, counts, undefined, logger, timersOf(clock));
  await off.start();
  await unexposed.start();
  count = 0;
  await clock.tickAsync(10 * MIN_COLLECTION_GAP_MS);
  assert.equal(collections, 0);
  assert.equal(logger.matching("info", "Collection after a drop is off").length, 1);
  await off.stop();
  await unexposed.stop();
});

Deno.test("exposedFullCollection asks V8's gc for a major, synchronous, heap-shrinking collection", () => {
  const calls: unknown[] = [];
  const collect = exposedFullCollection({ gc: (options: unknown) => calls.push(options) });
  assert.ok(collect);
  collect();
  assert.deepEqual(calls, [{ type: "major", execution: "sync", flavor: "last-resort" }]);
  assert.equal(exposedFullCollection({}), undefined);
});

Deno.test("CollectionAfterDrop refuses a drop that is not a positive integer", () => {
  const logger = new RecordingLogger();
  for (const minDrop of [0, -1, 1.5, NaN]) {
    assert.throws(
      () =>
        new CollectionAfterDrop({ counts: () => ({ now: 0, peak: 0 }), collect: () => {}, minDrop, logger }),
      RangeError,
    );
  }
});
