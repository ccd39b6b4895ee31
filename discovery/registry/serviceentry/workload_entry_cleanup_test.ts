import assert from "node:assert/strict";
import { WORKLOAD_CONTROLLER_ANNOTATION } from "./auto_registered_entry.ts";
import { livenessOf, manualGate, vm, world } from "./_auto_registration_test_support.ts";

Deno.test("An entry left marked connected to a replica that died is deleted 2.25 connection ages after its mark", async () => {
  const w = world({ maxConnectionAgeMs: 20_000 });
  const dead = w.replica("discovery-dead");
  await dead.onConnect(vm, w.connectedAt());
  const leader = w.replica("discovery-live");
  leader.start();
  await w.clock.tickAsync(45_000 - 1);
  assert.ok(w.stored());
  await w.clock.tickAsync(1);
  assert.equal(w.stored(), undefined);
  leader.stop();
});

Deno.test("Only the leader of the clean-up duty deletes; one that wins later deletes what is due at once", async () => {
  const gate = manualGate();
  const w = world({ gate });
  const registration = w.replica("discovery-0");
  registration.start();
  const at = w.connectedAt();
  await registration.onConnect(vm, at);
  await registration.onDisconnect(vm, at);
  await w.clock.tickAsync(30_000);
  assert.ok(w.stored(), "no replica leads: nothing is deleted");
  gate.win();
  await w.clock.tickAsync(0);
  assert.equal(w.stored(), undefined);
  registration.stop();
});

Deno.test("With connections that live forever, an entry of a replica whose liveness ran out goes a grace period after", async () => {
  const diedAt = new Map<string, number>();
  const w = world({ liveness: (clock) => livenessOf(clock, diedAt) });
  const dead = w.replica("discovery-dead");
  await dead.onConnect(vm, w.connectedAt());
  const leader = w.replica("discovery-live");
  leader.start();
  await w.clock.tickAsync(120_000);
  assert.ok(w.stored(), "a replica that lives keeps its entries however old their mark");

  diedAt.set("discovery-dead", w.clock.now + 5_000);
  // The clean-up looks again when the replica's liveness can run out, then a grace period after.
  await w.clock.tickAsync(15_000 - 1);
  assert.ok(w.stored(), "kept until a grace period after the liveness ran out");
  await w.clock.tickAsync(1);
  assert.equal(w.stored(), undefined);
  leader.stop();
});

Deno.test("An entry whose proxy reconnected to a live replica within the grace period stays after its old replica died", async () => {
  const diedAt = new Map<string, number>();
  const w = world({ liveness: (clock) => livenessOf(clock, diedAt) });
  const dead = w.replica("discovery-dead");
  await dead.onConnect(vm, w.connectedAt());
  const live = w.replica("discovery-live");
  live.start();
  diedAt.set("discovery-dead", w.clock.now);
  await w.clock.tickAsync(5_000);
  await live.onConnect(vm, w.connectedAt());
  await w.clock.tickAsync(60_000);
  assert.equal(w.stored()?.meta.annotations?.[WORKLOAD_CONTROLLER_ANNOTATION], "discovery-live");
  live.stop();
});

Deno.test("An entry of a replica whose liveness cannot be read is kept: nothing is judged without an answer", async () => {
  const w = world({
    liveness: () => ({
      expiry: () => Promise.reject(new Error("the API server answered 500")),
      retain() {},
    }),
  });
  const dead = w.replica("discovery-dead");
  await dead.onConnect(vm, w.connectedAt());
  const leader = w.replica("discovery-live");
  leader.start();
  await w.clock.tickAsync(600_000);
  assert.ok(w.stored());
  leader.stop();
});
