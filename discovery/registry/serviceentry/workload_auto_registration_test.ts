import assert from "node:assert/strict";
import { silentLogger } from "@mesh/shared/log/logger";
import { soleLeader } from "@mesh/shared/lifecycle/duty_gate";
import { storeWorkloadEntryWriter } from "../../model/workload_entry_writer.ts";
import { parseProxy } from "../../model/proxy.ts";
import {
  CONNECTED_AT_ANNOTATION,
  DISCONNECTED_AT_ANNOTATION,
  WORKLOAD_CONTROLLER_ANNOTATION,
} from "./auto_registered_entry.ts";
import { WorkloadAutoRegistration } from "./workload_auto_registration.ts";
import { vm, world } from "./_auto_registration_test_support.ts";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import type { Proxy } from "../../model/proxy.ts";
import { networking } from "../_test_support.ts";
import type { WorkloadEntrySpec } from "@mesh/shared/config/networking/workload_entry";

/** `vm` as a caller that proved `identities` (none: the plaintext port). */
function vmProving(...identities: string[]): Proxy {
  return { ...vm, verifiedIdentities: identities };
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
    const missing = {
      ...parseProxy({
        id: "sidecar~10.1.0.8~vm-8.vm~vm.svc.cluster.local",
        metadata: { AUTO_REGISTER_GROUP: "nope" },
      }),
      verifiedIdentities: vm.verifiedIdentities,
    };
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

Deno.test("Auto-registration refuses a proxy whose caller proved no identity of the entry's namespace and service account", async (t) => {
  const log = new RecordingLogger();
  const w = world({ log });
  const registration = w.replica("discovery-0");
  const refusals = () => log.lines.filter((l) => l.msg === "auto-registration refused");

  await t.step(
    "a node's metadata alone (the plaintext port) registers nothing, and is logged once a minute",
    async () => {
      const plaintext = vmProving();
      for (let i = 0; i < 5; i++) await registration.onConnect(plaintext, w.connectedAt());
      assert.equal(w.store.list("WorkloadEntry").length, 0);
      assert.equal(refusals().length, 1);
      assert.deepEqual(refusals()[0].fields, {
        proxy: vm.id,
        entry: "vm/reviews-10.1.0.7-vpc-1",
        reason:
          "the proxy's caller proved no identity; registering needs a client certificate or token on the " +
          "secure xDS port",
      });
      await w.clock.tickAsync(60_000);
      await registration.onConnect(plaintext, w.connectedAt());
      assert.equal(refusals().length, 2);
      assert.equal(refusals()[1].fields?.notLogged, 4);
    },
  );

  await t.step(
    "an identity of another namespace, or of another service account than the group's, neither",
    async () => {
      await registration.onConnect(
        vmProving("spiffe://cluster.local/ns/attacker/sa/reviews"),
        w.connectedAt(),
      );
      await registration.onConnect(vmProving("spiffe://cluster.local/ns/vm/sa/other"), w.connectedAt());
      await registration.onConnect(vmProving("not a spiffe id"), w.connectedAt());
      assert.equal(w.store.list("WorkloadEntry").length, 0);
      await w.clock.tickAsync(60_000);
      await registration.onConnect(vmProving("spiffe://cluster.local/ns/vm/sa/other"), w.connectedAt());
      assert.match(
        refusals().at(-1)!.fields!.reason as string,
        /has the entry's service account "reviews"$/,
      );
    },
  );

  await t.step(
    "the group's identity registers; a refused proxy's disconnect leaves the entry connected",
    async () => {
      const at = w.connectedAt();
      await registration.onConnect(vm, at);
      assert.equal(w.stored()?.meta.annotations?.[CONNECTED_AT_ANNOTATION], at.toISOString());
      const impostor = vmProving("spiffe://cluster.local/ns/vm/sa/other");
      await registration.onConnect(impostor, w.connectedAt());
      await registration.onDisconnect(impostor, w.connectedAt());
      await registration.onDisconnect(vmProving(), w.connectedAt());
      assert.equal(w.stored()?.meta.annotations?.[CONNECTED_AT_ANNOTATION], at.toISOString());
      assert.equal(w.stored()?.meta.annotations?.[DISCONNECTED_AT_ANNOTATION], undefined);
    },
  );
});

Deno.test("An existing entry's service account is the one its proxy must prove", async () => {
  const w = world();
  w.store.apply(
    networking<WorkloadEntrySpec>("WorkloadEntry", "vm", "reviews-10.1.0.7-vpc-1", {
      address: "10.1.0.7",
      serviceAccount: "ratings",
    }),
  );
  const registration = w.replica("discovery-0");
  await registration.onConnect(vm, w.connectedAt());
  assert.equal(w.stored()?.meta.annotations?.[CONNECTED_AT_ANNOTATION], undefined, "reviews may not take it");
  const at = w.connectedAt();
  await registration.onConnect(vmProving("spiffe://cluster.local/ns/vm/sa/ratings"), at);
  assert.equal(w.stored()?.meta.annotations?.[CONNECTED_AT_ANNOTATION], at.toISOString());
});

Deno.test("With identity validation off, a proxy registers on its metadata alone", async () => {
  const w = world({ validateIdentity: false });
  const registration = w.replica("discovery-0");
  await registration.onConnect(vmProving(), w.connectedAt());
  assert.ok(w.stored());
});
