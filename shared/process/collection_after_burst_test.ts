import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "../testing/fake_timers.ts";
import { RecordingLogger } from "../testing/recording_logger.ts";
import {
  BURST_CHECK_PERIOD_MS,
  CollectionAfterBurst,
  collectionAfterBurst,
  exposedFullCollection,
  MIN_COLLECTION_GAP_MS,
  QUIET_FRACTION,
  QUIET_MS,
} from "./collection_after_burst.ts";
import { CALL_WEIGHT_BYTES, TrafficMeter } from "./traffic_meter.ts";

const MIB = 1024 * 1024;
const MIN_BYTES = 32 * MIB;

function setUp() {
  const clock = FakeTimers.createClock();
  const logger = new RecordingLogger();
  const meter = new TrafficMeter();
  const state = { busy: false, collections: 0, pauses: [] as number[] };
  const watcher = new CollectionAfterBurst({
    traffic: () => meter.total,
    busy: () => state.busy,
    collect: () => {
      state.collections++;
      clock.tick(200);
    },
    collected: (ms) => state.pauses.push(ms),
    minBytes: MIN_BYTES,
    timers: timersOf(clock),
    logger,
  });
  return { clock, logger, meter, state, watcher };
}

/** `bytes` received over `ms`, in one message a check period. */
async function trickle(
  clock: FakeTimers.Clock,
  meter: TrafficMeter,
  bytes: number,
  ms: number,
): Promise<void> {
  const periods = Math.ceil(ms / BURST_CHECK_PERIOD_MS);
  for (let i = 0; i < periods; i++) {
    meter.received(bytes / periods);
    await clock.tickAsync(BURST_CHECK_PERIOD_MS);
  }
}

Deno.test("CollectionAfterBurst collects once after a burst, once the server has been quiet", async () => {
  const { clock, logger, meter, state, watcher } = setUp();
  watcher.start();
  // Four delta streams sending 120 MB of names over 40 s.
  await trickle(clock, meter, 120 * MIB, 40_000);
  assert.equal(state.collections, 0, "nothing while the burst goes on");
  await clock.tickAsync(BURST_CHECK_PERIOD_MS);
  assert.equal(state.collections, 0, "one quiet check is not yet quiet for long");
  await clock.tickAsync(QUIET_MS - BURST_CHECK_PERIOD_MS);
  assert.equal(state.collections, 1);
  await clock.tickAsync(10 * MIN_COLLECTION_GAP_MS);
  assert.equal(state.collections, 1, "one collection per burst");
  assert.deepEqual(state.pauses, [200]);
  assert.deepEqual(
    logger.matching("info", "Collected the heap after a burst").map((l) => l.fields),
    [{ burstMiB: 120, ms: 200 }],
  );
  await watcher.stop();
});

Deno.test("CollectionAfterBurst counts a burst of short calls by their number", async () => {
  const { clock, meter, state, watcher } = setUp();
  watcher.start();
  // 2,100 unary calls that came and went within one check period.
  for (let i = 0; i < 2_100; i++) {
    meter.received(1_000);
    meter.ended();
  }
  assert.ok(meter.total >= 2_100 * CALL_WEIGHT_BYTES);
  await clock.tickAsync(BURST_CHECK_PERIOD_MS + QUIET_MS);
  assert.equal(state.collections, 1);
  await watcher.stop();
});

Deno.test("CollectionAfterBurst waits while a push or build is in flight, and for quiet after it", async () => {
  const { clock, meter, state, watcher } = setUp();
  watcher.start();
  meter.received(64 * MIB);
  state.busy = true;
  await clock.tickAsync(10 * QUIET_MS);
  assert.equal(state.collections, 0, "never during a push");
  state.busy = false;
  await clock.tickAsync(BURST_CHECK_PERIOD_MS);
  assert.equal(state.collections, 0, "the push's end starts the quiet period");
  await clock.tickAsync(QUIET_MS);
  assert.equal(state.collections, 1);
  await watcher.stop();
});

Deno.test("CollectionAfterBurst leaves a steady server alone, however long it runs", async () => {
  const { clock, meter, state, watcher } = setUp();
  watcher.start();
  // A fleet's ACKs and renewals, just under the quiet bound every period, for a day: 2.6 GB in all.
  const perPeriod = MIN_BYTES / QUIET_FRACTION - 1;
  for (let t = 0; t < 24 * 3_600_000; t += BURST_CHECK_PERIOD_MS) {
    meter.received(perPeriod);
    await clock.tickAsync(BURST_CHECK_PERIOD_MS);
  }
  // Pushes every minute whose ACKs stay below the burst: busy, then quiet, again and again.
  for (let i = 0; i < 60; i++) {
    state.busy = true;
    meter.received(MIN_BYTES / 4);
    await clock.tickAsync(BURST_CHECK_PERIOD_MS);
    state.busy = false;
    await clock.tickAsync(MIN_COLLECTION_GAP_MS - BURST_CHECK_PERIOD_MS);
  }
  assert.equal(state.collections, 0);
  await watcher.stop();
});

Deno.test("CollectionAfterBurst collects once when a server busy without pause pauses", async () => {
  const { clock, meter, state, watcher } = setUp();
  watcher.start();
  await trickle(clock, meter, 10 * MIN_BYTES, 600_000);
  assert.equal(state.collections, 0);
  await clock.tickAsync(QUIET_MS + BURST_CHECK_PERIOD_MS);
  assert.equal(state.collections, 1);
  await trickle(clock, meter, 0, 600_000);
  assert.equal(state.collections, 1);
  await watcher.stop();
});

Deno.test("CollectionAfterBurst collects at most once a minute, and nothing after stop", async () => {
  const { clock, meter, state, watcher } = setUp();
  watcher.start();
  // A burst every 20 s, each followed by 15 s of quiet.
  for (let i = 0; i < 18; i++) {
    meter.received(MIN_BYTES);
    await clock.tickAsync(4 * BURST_CHECK_PERIOD_MS);
  }
  assert.equal(state.collections, 6, "18 bursts in 6 minutes, one collection a minute");
  await watcher.stop();
  meter.received(MIN_BYTES);
  await clock.tickAsync(10 * MIN_COLLECTION_GAP_MS);
  assert.equal(state.collections, 6);
});

Deno.test("collectionAfterBurst is off at 0 and without an exposed gc, and says why once", async () => {
  const clock = FakeTimers.createClock();
  const logger = new RecordingLogger();
  const meter = new TrafficMeter();
  let collections = 0;
  const wiring = {
    traffic: () => meter.total,
    busy: () => false,
    logger,
    timers: timersOf(clock),
  };
  const off = collectionAfterBurst({ ...wiring, minBytes: 0, collect: () => collections++ });
  const unexposed = collectionAfterBurst({ ...wiring, minBytes: MIN_BYTES, collect: undefined });
  await off.start();
  await unexposed.start();
  meter.received(10 * MIN_BYTES);
  await clock.tickAsync(10 * MIN_COLLECTION_GAP_MS);
  assert.equal(collections, 0);
  assert.equal(logger.matching("info", "Collection after a burst is off").length, 1);
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

Deno.test("CollectionAfterBurst refuses a burst size that is not a positive integer", () => {
  const logger = new RecordingLogger();
  for (const minBytes of [0, -1, 1.5, NaN, 2 ** 60]) {
    assert.throws(
      () =>
        new CollectionAfterBurst({
          traffic: () => 0,
          busy: () => false,
          collect: () => {},
          minBytes,
          logger,
        }),
      RangeError,
    );
  }
});
