import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { SyncGate } from "./sync_gate.ts";

function gateOver(clock: FakeTimers.Clock) {
  const state = { unsynced: "registries not synced: Orchestrator" as string | undefined, requests: 0 };
  const gate = new SyncGate({
    unsynced: () => state.unsynced,
    requestFull: () => void state.requests++,
    pollMs: 50,
    timers: timersOf(clock),
  });
  return { state, gate };
}

Deno.test("SyncGate stays shut, naming the unsynced source, until a snapshot built after the sync is published", () => {
  const clock = FakeTimers.createClock();
  const { state, gate } = gateOver(clock);
  gate.start();
  assert.equal(gate.waiting(), "waiting for every source to sync (registries not synced: Orchestrator)");
  // A build that began before the sync holds a partial view, even when it is published after it.
  const before = gate.buildStarting();
  state.unsynced = undefined;
  gate.built(before, true);
  assert.equal(gate.open, false);
  assert.equal(gate.waiting(), "building the first configuration snapshot since every source synced");
  const after = gate.buildStarting();
  gate.built(after, true);
  assert.equal(gate.open, true);
  assert.equal(gate.waiting(), undefined);
  state.unsynced = "registries not synced: Orchestrator";
  assert.equal(gate.waiting(), undefined, "a source that relists later does not shut the gate again");
  gate.close();
});

Deno.test("SyncGate asks for one full push when the sources sync, even with no event to build a snapshot", () => {
  const clock = FakeTimers.createClock();
  const { state, gate } = gateOver(clock);
  gate.start();
  clock.tick(500);
  assert.equal(state.requests, 0, "nothing is asked while a source is still listing");
  state.unsynced = undefined;
  clock.tick(50);
  assert.equal(state.requests, 1);
  clock.tick(1_000);
  assert.equal(
    state.requests,
    1,
    "one request while its build is pending: more would hold the debouncer back",
  );
  gate.built(gate.buildStarting(), true);
  assert.equal(clock.countTimers(), 0, "no check is left once the gate is open");
});

Deno.test("SyncGate asks again when the build after the sync failed", () => {
  const clock = FakeTimers.createClock();
  const { state, gate } = gateOver(clock);
  state.unsynced = undefined;
  gate.start();
  assert.equal(state.requests, 1, "synced already at start: asked at once");
  gate.built(gate.buildStarting(), false);
  assert.equal(gate.open, false);
  clock.tick(50);
  assert.equal(state.requests, 2);
  gate.close();
  assert.equal(clock.countTimers(), 0, "close stops the checks");
});

Deno.test("SyncGate opens with the first snapshot when every source had synced before it was built", () => {
  const clock = FakeTimers.createClock();
  const { state, gate } = gateOver(clock);
  state.unsynced = undefined;
  gate.built(gate.buildStarting(), true);
  gate.start();
  assert.equal(gate.open, true);
  assert.equal(state.requests, 0, "nothing to ask for: the first snapshot is complete");
  assert.equal(clock.countTimers(), 0);
});
