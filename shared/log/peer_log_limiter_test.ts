import assert from "node:assert/strict";
import { PeerLogLimiter } from "./peer_log_limiter.ts";

Deno.test("PeerLogLimiter lets one line per address through each period", () => {
  let now = 0;
  const limiter = new PeerLogLimiter(60_000, () => now);
  const logged = (peer: string) => limiter.take(peer) !== undefined;
  assert.deepEqual([logged("a"), logged("a"), logged("b")], [true, false, true]);
  now = 59_999;
  assert.equal(logged("a"), false);
  now = 60_000;
  assert.deepEqual([logged("a"), logged("b")], [true, true]);
});

Deno.test("PeerLogLimiter lets one line a period through per peer, counting those passed over", () => {
  let now = 0;
  const limiter = new PeerLogLimiter(60_000, () => now, 2);
  assert.equal(limiter.take("a"), 0);
  assert.equal(limiter.take("a"), undefined);
  assert.equal(limiter.take("a"), undefined);
  assert.equal(limiter.take("b"), 0, "another peer has its own budget");
  assert.equal(limiter.take("c"), undefined, "no room for a third peer while none is stale");
  now = 60_000;
  assert.equal(limiter.take("a"), 2);
  assert.equal(limiter.take("c"), 0, "a stale peer made room");
});

Deno.test("PeerLogLimiter with a budget of lines lets that many through each period, then counts the rest", () => {
  let now = 0;
  const limiter = new PeerLogLimiter(60_000, () => now, 10, 3);
  assert.deepEqual([1, 2, 3, 4, 5].map(() => limiter.take("a")), [0, 0, 0, undefined, undefined]);
  assert.equal(limiter.take("b"), 0);
  now = 60_000;
  assert.deepEqual([limiter.take("a"), limiter.take("a"), limiter.take("a")], [2, 0, 0]);
  assert.equal(limiter.take("a"), undefined);
  assert.throws(() => new PeerLogLimiter(60_000, () => now, 10, 0), RangeError);
});

Deno.test("PeerLogLimiter.log writes a line only within the budget, telling it how many were passed over", () => {
  let now = 0;
  const limiter = new PeerLogLimiter(60_000, () => now);
  const lines: number[] = [];
  for (let i = 0; i < 5; i++) limiter.log("a", (passedOver) => lines.push(passedOver));
  now = 60_000;
  limiter.log("a", (passedOver) => lines.push(passedOver));
  assert.deepEqual(lines, [0, 4]);
});
