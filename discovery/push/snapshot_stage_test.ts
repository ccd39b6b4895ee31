import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { silentLogger } from "@mesh/shared/log/logger";
import { configKey, pushRequest } from "./push_request.ts";
import { SnapshotStage } from "./snapshot_stage.ts";
import type { PushContext } from "./push_context.ts";
import { serviceEntry, world } from "./_test_support.ts";

Deno.test("SnapshotStage rebuilds on full pushes and hands each request on", async (t) => {
  const w = world();
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  let builds = 0;
  let fail = false;
  const stage = new SnapshotStage({
    build: () => {
      builds++;
      if (fail) throw new Error("broken");
      return w.push({ version: `v${builds}` });
    },
    log: silentLogger,
    metrics,
  });
  const seen: string[] = [];
  stage.onPush((request, push: PushContext) =>
    void seen.push(`${request.full ? "full" : "eds"}@${push.version}`)
  );

  await t.step("the first snapshot exists at once", () => {
    assert.equal(stage.current().version, "v1");
  });

  await t.step("a full request builds a new snapshot and sets the gauges", async () => {
    w.apply(serviceEntry("ns", "a", "a.example"));
    await stage.handle(pushRequest(true, "config", ["x"], 0));
    assert.equal(stage.current().version, "v2");
    assert.match(await metrics.render(), /discovery_services 1/);
  });

  await t.step("an endpoint-only request reuses the snapshot", async () => {
    await stage.handle(pushRequest(false, "endpoint", ["y"], 0));
    assert.deepEqual(seen, ["full@v2", "eds@v2"]);
    assert.equal(builds, 2);
  });

  await t.step("a failed build keeps the previous snapshot and counts the error", async () => {
    fail = true;
    await stage.handle(pushRequest(true, "config", ["z"], 0));
    assert.equal(stage.current().version, "v2");
    assert.match(await metrics.render(), /discovery_xds_push_context_errors 1/);
    assert.equal(seen.at(-1), "full@v2");
  });
});

Deno.test("A snapshot for changes sidecar listeners cannot see keeps the previous one's listener conflicts", async (t) => {
  const w = world();
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  let builds = 0;
  const stage = new SnapshotStage({
    build: () => w.push({ version: `v${++builds}` }),
    log: silentLogger,
    metrics,
  });
  stage.current().listenerConflicts.add("discovery_no_ip", "client.ns");

  await t.step("a DestinationRule change does not regenerate listeners: the conflicts stay", async () => {
    await stage.handle(pushRequest(true, "config", [configKey("DestinationRule", "ns", "dr")], 0));
    assert.deepEqual(stage.current().listenerConflicts.keys("discovery_no_ip"), ["client.ns"]);
    assert.match(await metrics.render(), /^discovery_no_ip 1$/m);
  });

  await t.step(
    "a change listeners read starts the count afresh, as their generation refills it",
    async () => {
      await stage.handle(pushRequest(true, "config", [configKey("VirtualService", "ns", "vs")], 0));
      assert.deepEqual(stage.current().listenerConflicts.keys("discovery_no_ip"), []);
      assert.match(await metrics.render(), /^discovery_no_ip 0$/m);
    },
  );
});
