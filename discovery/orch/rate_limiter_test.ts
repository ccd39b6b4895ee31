import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { RateLimiter } from "./rate_limiter.ts";

Deno.test("The QPS limiter refills and waits on its injected clock", async () => {
  const clock = FakeTimers.createClock(0);
  const limiter = new RateLimiter(2, 1, timersOf(clock));
  await limiter.acquire();
  let second = false;
  const waiting = limiter.acquire().then(() => second = true);
  await Promise.resolve();
  assert.equal(second, false, "the bucket is empty until half a second passes");
  clock.tick(499);
  await Promise.resolve();
  assert.equal(second, false);
  clock.tick(1);
  await waiting;
  assert.equal(second, true);
});
