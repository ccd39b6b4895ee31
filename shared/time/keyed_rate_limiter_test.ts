import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { KeyedRateLimiter } from "./keyed_rate_limiter.ts";

Deno.test("KeyedRateLimiter gives each key its own burst, refills at qps and reports the first refusal", () => {
  const clock = FakeTimers.createClock(0);
  const limiter = new KeyedRateLimiter({ qps: 1, burst: 2, maxKeys: 10 }, () => clock.now);
  assert.deepEqual([limiter.take("a"), limiter.take("a")], [{ allowed: true }, { allowed: true }]);
  assert.deepEqual(limiter.take("a"), { allowed: false, retryAfterMs: 1000, first: true });
  assert.deepEqual(limiter.take("b"), { allowed: true });
  clock.tick(400);
  assert.deepEqual(limiter.take("a"), { allowed: false, retryAfterMs: 600, first: false });
  clock.tick(600);
  assert.deepEqual(limiter.take("a"), { allowed: true });
  assert.deepEqual(limiter.take("a"), { allowed: false, retryAfterMs: 1000, first: true });
});

Deno.test("KeyedRateLimiter forgets keys whose bucket refilled, and the least recently seen past its cap", () => {
  const clock = FakeTimers.createClock(0);
  const limiter = new KeyedRateLimiter({ qps: 1, burst: 2, maxKeys: 3 }, () => clock.now);
  limiter.take("a");
  limiter.take("a");
  assert.equal(limiter.take("a").allowed, false);
  for (const id of ["b", "c"]) limiter.take(id);
  assert.equal(limiter.size, 3);
  // Past the cap: "a", seen least recently, is forgotten, so it starts again with a full bucket.
  limiter.take("d");
  assert.equal(limiter.size, 3);
  assert.deepEqual(limiter.take("a"), { allowed: true });
  // Two seconds on every bucket is full again: each is dropped as the next request passes it.
  clock.tick(2000);
  limiter.take("e");
  assert.equal(limiter.size, 1);
});

Deno.test("KeyedRateLimiter refuses limits that would disable it", () => {
  for (const limits of [{ qps: 0, burst: 1 }, { qps: 1, burst: 0 }, { qps: Number.NaN, burst: 1 }]) {
    assert.throws(() => new KeyedRateLimiter({ ...limits, maxKeys: 1 }, () => 0), RangeError);
  }
});
