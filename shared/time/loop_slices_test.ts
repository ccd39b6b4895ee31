import assert from "node:assert/strict";
import { LoopSlices } from "./loop_slices.ts";

/** True when a timer set before `step` fired before `step` finished: the event loop got a turn. */
async function loopTurnedDuring(step: () => Promise<void>): Promise<boolean> {
  let fired = false;
  const timer = setTimeout(() => fired = true, 0);
  await step();
  clearTimeout(timer);
  return fired;
}

Deno.test("LoopSlices gives the event loop a turn only once a slice of work is spent", async () => {
  let now = 1_000;
  const slices = new LoopSlices(20, () => now);
  now += 19;
  assert.equal(await loopTurnedDuring(() => slices.pause()), false, "time left in the slice");
  now += 1;
  assert.equal(await loopTurnedDuring(() => slices.pause()), true, "the slice is spent");
  now += 5;
  assert.equal(await loopTurnedDuring(() => slices.pause()), false, "a new slice started after the turn");
});

Deno.test("LoopSlices gives the event loop a turn every 2 ms of work unless told otherwise", async () => {
  let now = 1_000;
  const slices = new LoopSlices(undefined, () => now);
  now += 1;
  assert.equal(await loopTurnedDuring(() => slices.pause()), false, "time left in the slice");
  now += 1;
  assert.equal(await loopTurnedDuring(() => slices.pause()), true, "the slice is spent");
});
