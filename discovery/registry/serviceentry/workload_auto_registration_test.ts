import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { silentLogger } from "../../../shared/log/logger.ts";
import type { WorkloadGroupSpec } from "../../../shared/config/networking/workload_group.ts";
import { parseProxy } from "../../model/proxy.ts";
import { networking, orderedStore } from "../_test_support.ts";
import {
  AUTO_REGISTRATION_GROUP_ANNOTATION,
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

Deno.test("WorkloadAutoRegistration keeps an entry while connected and removes it after the grace period", async (t) => {
  const clock = FakeTimers.install();
  try {
    const store = orderedStore();
    store.apply(group);
    const registration = new WorkloadAutoRegistration(store, {
      enabled: true,
      gracePeriodMs: 10_000,
      instanceId: "discovery-0",
      log: silentLogger,
    });
    const stored = () => store.get("WorkloadEntry", "vm", "reviews-10.1.0.7-vpc-1");

    await t.step("connect writes the entry with the controller annotation", () => {
      registration.onConnect(vm);
      assert.equal(stored()?.meta.annotations?.[WORKLOAD_CONTROLLER_ANNOTATION], "discovery-0");
    });

    await t.step("a reconnect within the grace period keeps it", async () => {
      registration.onDisconnect(vm);
      assert.ok(stored()?.meta.annotations?.[DISCONNECTED_AT_ANNOTATION]);
      await clock.tickAsync(9_000);
      registration.onConnect(vm);
      await clock.tickAsync(5_000);
      assert.ok(stored());
    });

    await t.step("staying away for the grace period removes it", async () => {
      registration.onDisconnect(vm);
      await clock.tickAsync(9_999);
      assert.ok(stored());
      await clock.tickAsync(1);
      assert.equal(stored(), undefined);
    });

    await t.step("nothing happens when disabled or the group is missing", () => {
      const off = new WorkloadAutoRegistration(store, {
        enabled: false,
        gracePeriodMs: 1,
        instanceId: "x",
        log: silentLogger,
      });
      assert.equal(off.onConnect(vm), undefined);
      const missing = parseProxy({
        id: "sidecar~10.1.0.8~vm-8.vm~vm.svc.cluster.local",
        metadata: { AUTO_REGISTER_GROUP: "nope" },
      });
      assert.equal(registration.onConnect(missing), undefined);
      assert.equal(store.list("WorkloadEntry").length, 0);
    });
    registration.close();
  } finally {
    clock.uninstall();
  }
});
