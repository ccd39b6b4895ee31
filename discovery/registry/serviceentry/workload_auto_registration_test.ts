import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { silentLogger } from "@mesh/shared/log/logger";
import { type DutyGate, soleLeader } from "@mesh/shared/lifecycle/duty_gate";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { storeWorkloadEntryWriter } from "../../model/workload_entry_writer.ts";
import type { WorkloadGroupSpec } from "@mesh/shared/config/networking/workload_group";
import { parseProxy } from "../../model/proxy.ts";
import { networking, orderedStore } from "../_test_support.ts";
import {
  AUTO_REGISTRATION_GROUP_ANNOTATION,
  CONNECTED_AT_ANNOTATION,
  DISCONNECTED_AT_ANNOTATION,
  WORKLOAD_CONTROLLER_ANNOTATION,
  WorkloadAutoRegistration,
  workloadEntryFromGroup,
} from "./workload_auto_registration.ts";

const group = networking<WorkloadGroupSpec>("WorkloadGroup", "vm", "reviews", {
  metadata: { labels: { app: "reviews", tier: "group" }, annotations: { team: "books" } },
  template: {
    address: "",
    labels: { tier: "template", version: "v1" },
    ports: { http: 8080 },
    serviceAccount: "reviews",
  },
});

const vm = parseProxy({
  id: "sidecar~10.1.0.7~vm-7.vm~vm.svc.cluster.local",
  metadata: { AUTO_REGISTER_GROUP: "reviews", NETWORK: "vpc-1", LABELS: { tier: "proxy" } },
  locality: { region: "r1", zone: "z2" },
});

Deno.test("workloadEntryFromGroup fills the group's template from the proxy", () => {
  const entry = workloadEntryFromGroup(group, vm);
  assert.equal(entry.meta.name, "reviews-10.1.0.7-vpc-1");
  assert.equal(entry.meta.namespace, "vm");
  assert.deepEqual(entry.spec, {
    address: "10.1.0.7",
    labels: { app: "reviews", tier: "proxy", version: "v1" },
    ports: { http: 8080 },
    serviceAccount: "reviews",
    network: "vpc-1",
    locality: "r1/z2",
  });
  assert.deepEqual(entry.meta.annotations, {
    team: "books",
    [AUTO_REGISTRATION_GROUP_ANNOTATION]: "reviews",
  });
});

/** A gate the test opens and closes, as an election would. */
function manualGate(): DutyGate & { win(): void; lose(): void } {
  let leading = false;
  let controller: AbortController | undefined;
  const runs = new Set<(signal: AbortSignal) => void>();
  return {
    duty: "mesh-leader",
    leading: () => leading,
    whileLeading(run) {
      runs.add(run);
      if (leading) run(controller!.signal);
      return () => runs.delete(run);
    },
    win() {
      leading = true;
      controller = new AbortController();
      for (const run of runs) run(controller.signal);
    },
    lose() {
      leading = false;
      controller?.abort();
    },
  };
}

/** One store (the orchestrator both replicas read), a fake clock, and a registration per replica. */
function world(options: { gate?: DutyGate; maxConnectionAgeMs?: number } = {}) {
  const clock = FakeTimers.createClock(Date.parse("2026-01-01T00:00:00Z"));
  const store = orderedStore();
  store.apply(group);
  const replica = (instanceId: string, gate: DutyGate = options.gate ?? soleLeader("mesh-leader")) =>
    new WorkloadAutoRegistration({
      enabled: true,
      gracePeriodMs: 10_000,
      maxConnectionAgeMs: options.maxConnectionAgeMs ?? Infinity,
      instanceId,
      store,
      writer: storeWorkloadEntryWriter(store),
      cleanup: gate,
      log: silentLogger,
      now: () => new Date(clock.now),
      timers: timersOf(clock),
    });
  const stored = () => store.get("WorkloadEntry", "vm", "reviews-10.1.0.7-vpc-1");
  const connectedAt = () => new Date(clock.now);
  return { clock, store, replica, stored, connectedAt };
}

Deno.test("An entry is written on connect, marked on disconnect, and deleted by the leader after the grace period", async (t) => {
  const w = world();
  const registration = w.replica("discovery-0");
  registration.start();
  const first = w.connectedAt();

  await t.step("connect writes the entry with this replica and the connection's start", async () => {
    await registration.onConnect(vm, first);
    assert.equal(w.stored()?.meta.annotations?.[WORKLOAD_CONTROLLER_ANNOTATION], "discovery-0");
    assert.equal(w.stored()?.meta.annotations?.[CONNECTED_AT_ANNOTATION], first.toISOString());
  });

  await t.step("a reconnect within the grace period keeps it", async () => {
    await registration.onDisconnect(vm, first);
    assert.ok(w.stored()?.meta.annotations?.[DISCONNECTED_AT_ANNOTATION]);
    assert.equal(w.stored()?.meta.annotations?.[CONNECTED_AT_ANNOTATION], undefined);
    await w.clock.tickAsync(9_000);
    await registration.onConnect(vm, w.connectedAt());
    assert.equal(w.stored()?.meta.annotations?.[DISCONNECTED_AT_ANNOTATION], undefined);
    await w.clock.tickAsync(5_000);
    assert.ok(w.stored());
  });

  await t.step("staying away for the grace period removes it", async () => {
    const since = new Date(Date.parse(w.stored()!.meta.annotations![CONNECTED_AT_ANNOTATION]));
    await registration.onDisconnect(vm, since);
    await w.clock.tickAsync(9_999);
    assert.ok(w.stored());
    await w.clock.tickAsync(1);
    assert.equal(w.stored(), undefined);
  });

  await t.step("nothing happens when disabled or the group is missing", async () => {
    const off = new WorkloadAutoRegistration({
      enabled: false,
      gracePeriodMs: 1,
      maxConnectionAgeMs: Infinity,
      instanceId: "x",
      store: w.store,
      writer: storeWorkloadEntryWriter(w.store),
      cleanup: soleLeader("mesh-leader"),
      log: silentLogger,
    });
    await off.onConnect(vm, w.connectedAt());
    const missing = parseProxy({
      id: "sidecar~10.1.0.8~vm-8.vm~vm.svc.cluster.local",
      metadata: { AUTO_REGISTER_GROUP: "nope" },
    });
    await registration.onConnect(missing, w.connectedAt());
    assert.equal(w.store.list("WorkloadEntry").length, 0);
  });
  registration.stop();
});

Deno.test("A proxy that moved to another replica keeps its entry: the old replica's late disconnect leaves it", async () => {
  const w = world();
  const a = w.replica("discovery-a");
  const b = w.replica("discovery-b");
  a.start();
  const onA = w.connectedAt();
  await a.onConnect(vm, onA);
  await w.clock.tickAsync(1_000);
  await b.onConnect(vm, w.connectedAt());
  await a.onDisconnect(vm, onA);
  assert.equal(w.stored()?.meta.annotations?.[WORKLOAD_CONTROLLER_ANNOTATION], "discovery-b");
  assert.equal(w.stored()?.meta.annotations?.[DISCONNECTED_AT_ANNOTATION], undefined);
  // A connect older than the entry's own mark (a's, reported late) changes nothing either.
  await a.onConnect(vm, onA);
  assert.equal(w.stored()?.meta.annotations?.[WORKLOAD_CONTROLLER_ANNOTATION], "discovery-b");
  await w.clock.tickAsync(60_000);
  assert.ok(w.stored(), "an entry marked connected is never deleted within the connection age");
  a.stop();
});

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
