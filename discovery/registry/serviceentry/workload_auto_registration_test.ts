import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { silentLogger } from "@mesh/shared/log/logger";
import { type DutyGate, soleLeader } from "@mesh/shared/lifecycle/duty_gate";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { storeWorkloadEntryWriter } from "../../model/workload_entry_writer.ts";
import type { ReplicaExpiry, ReplicaLivenessView } from "../../model/replica_liveness_view.ts";
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
function world(
  options: {
    gate?: DutyGate;
    maxConnectionAgeMs?: number;
    liveness?: (clock: FakeTimers.Clock) => ReplicaLivenessView;
  } = {},
) {
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
      ...(options.liveness ? { liveness: options.liveness(clock) } : {}),
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

/** Replicas' liveness as the test sets it: a replica named in `diedAt` ran out then, the others live on. */
function livenessOf(clock: FakeTimers.Clock, diedAt: Map<string, number>): ReplicaLivenessView {
  return {
    expiry(replica): Promise<ReplicaExpiry> {
      const died = diedAt.get(replica);
      return Promise.resolve(
        died !== undefined && died <= clock.now
          ? { expired: true, at: died }
          : { expired: false, at: died ?? clock.now + 30_000 },
      );
    },
    retain() {},
  };
}

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

Deno.test("A replica restarted under the same name releases the entries of its previous run whose proxies did not come back", async () => {
  const w = world();
  const before = w.replica("discovery-0");
  before.start();
  await before.onConnect(vm, w.connectedAt());
  const back = parseProxy({
    id: "sidecar~10.1.0.9~vm-9.vm~vm.svc.cluster.local",
    metadata: { AUTO_REGISTER_GROUP: "reviews" },
  });
  await before.onConnect(back, w.connectedAt());
  // The process dies: nothing is marked, and its liveness Lease goes on under the same name after the restart.
  before.stop();
  await w.clock.tickAsync(5_000);
  const after = w.replica("discovery-0");
  after.start();
  await after.onConnect(back, w.connectedAt());
  await w.clock.tickAsync(0);
  assert.ok(w.stored()?.meta.annotations?.[DISCONNECTED_AT_ANNOTATION], "the proxy that did not come back");
  await w.clock.tickAsync(10_000);
  assert.equal(w.stored(), undefined, "deleted a grace period after the restart");
  const kept = w.store.get("WorkloadEntry", "vm", "reviews-10.1.0.9");
  assert.equal(kept?.meta.annotations?.[DISCONNECTED_AT_ANNOTATION], undefined, "the proxy that came back");
  after.stop();
});
