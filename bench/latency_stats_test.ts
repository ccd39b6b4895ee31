import assert from "node:assert/strict";
import { quantile, summarize } from "./latency_stats.ts";

Deno.test("quantile uses the nearest rank", () => {
  const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(quantile(sorted, 0.5), 50);
  assert.equal(quantile(sorted, 0.99), 99);
  assert.equal(quantile(sorted, 1), 100);
  assert.equal(quantile([7], 0.99), 7);
});

Deno.test("summarize sorts its samples and reports NaN for none", () => {
  const s = summarize([30, 10, 20]);
  assert.deepEqual({ min: s.min, p50: s.p50, max: s.max, mean: s.mean, count: s.count }, {
    min: 10,
    p50: 20,
    max: 30,
    mean: 20,
    count: 3,
  });
  assert.ok(Number.isNaN(summarize([]).p99));
});
