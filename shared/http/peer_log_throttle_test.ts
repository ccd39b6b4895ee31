import assert from "node:assert/strict";
import { PeerLogThrottle } from "./peer_log_throttle.ts";

Deno.test("PeerLogThrottle lets one line per address through each period", () => {
  let now = 0;
  const throttle = new PeerLogThrottle(60_000, () => now);
  assert.deepEqual([throttle.take("a"), throttle.take("a"), throttle.take("b")], [true, false, true]);
  now = 59_999;
  assert.equal(throttle.take("a"), false);
  now = 60_000;
  assert.deepEqual([throttle.take("a"), throttle.take("b")], [true, true]);
});
