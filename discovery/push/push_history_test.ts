import assert from "node:assert/strict";
import { PushHistory } from "./push_history.ts";

Deno.test("PushHistory counts pushes per bucket and gives their time percentiles", () => {
  let now = 1_000_000;
  const history = new PushHistory({ bucketMs: 10_000, buckets: 6, now: () => now });
  for (let i = 0; i < 98; i++) history.record(0.004);
  history.record(0.2);
  history.record(3);
  now += 10_000;
  history.record(0.02);
  const series = history.series();
  assert.equal(series.length, 6);
  assert.deepEqual(series.map((b) => b.pushes), [0, 0, 0, 0, 100, 1]);
  const busy = series[4]!;
  assert.equal(busy.perSecond, 10);
  assert.equal(busy.p50, 0.005);
  assert.equal(busy.p90, 0.005);
  assert.equal(busy.p99, 0.25);
  assert.equal(series[5]!.p50, 0.02, "never above the largest push seen");
  assert.equal(history.summary().pushes, 101);
});

Deno.test("PushHistory forgets buckets older than its window and stays at its size", () => {
  let now = 0;
  const history = new PushHistory({ bucketMs: 1000, buckets: 3, now: () => now });
  history.record(0.01);
  now = 2500;
  history.record(0.01);
  history.record(0.01);
  assert.deepEqual(history.series().map((b) => b.pushes), [1, 0, 2]);
  now = 3000;
  assert.deepEqual(history.series().map((b) => b.pushes), [0, 2, 0]);
  now = 3000 + 3000;
  history.record(0.5);
  assert.deepEqual(history.series().map((b) => b.pushes), [0, 0, 1]);
  assert.equal(history.summary().pushes, 1);
  assert.equal(history.summary().p99, 0.5);
});

Deno.test("PushHistory refuses a window without buckets", () => {
  assert.throws(() => new PushHistory({ buckets: 0 }), RangeError);
});
