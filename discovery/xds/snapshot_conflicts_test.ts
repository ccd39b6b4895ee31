import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { configKey, pushRequest, withHttpRoutesAlone } from "../push/push_request.ts";
import { SnapshotConflicts } from "./snapshot_conflicts.ts";

Deno.test("A snapshot for changes sidecar listeners cannot see keeps the previous one's listener conflicts", async (t) => {
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  const conflicts = new SnapshotConflicts(metrics);
  conflicts.snapshot("v1");
  conflicts.add("discovery_no_ip", "client.ns");

  await t.step("an endpoint-only push of the same snapshot keeps them", async () => {
    conflicts.snapshot("v1", pushRequest(false, "endpoint", ["ServiceEntry/ns/a.example"], 0));
    assert.deepEqual(conflicts.keys("discovery_no_ip"), ["client.ns"]);
    assert.match(await metrics.render(), /^discovery_no_ip 1$/m);
  });

  await t.step("a DestinationRule change does not regenerate listeners: the conflicts stay", async () => {
    conflicts.snapshot("v2", pushRequest(true, "config", [configKey("DestinationRule", "ns", "dr")], 0));
    assert.deepEqual(conflicts.keys("discovery_no_ip"), ["client.ns"]);
    assert.match(await metrics.render(), /^discovery_no_ip 1$/m);
  });

  await t.step("a change to VirtualServices' HTTP routes alone does not regenerate them either", async () => {
    const vs = pushRequest(true, "config", [configKey("VirtualService", "ns", "vs")], 0);
    conflicts.snapshot("v2.1", withHttpRoutesAlone(vs));
    assert.deepEqual(conflicts.keys("discovery_no_ip"), ["client.ns"]);
    assert.match(await metrics.render(), /^discovery_no_ip 1$/m);
  });

  await t.step(
    "a change listeners read starts the count afresh, as their generation refills it",
    async () => {
      conflicts.snapshot("v3", pushRequest(true, "config", [configKey("VirtualService", "ns", "vs")], 0));
      assert.deepEqual(conflicts.keys("discovery_no_ip"), []);
      assert.match(await metrics.render(), /^discovery_no_ip 0$/m);
    },
  );
});
