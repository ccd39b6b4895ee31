import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { silentLogger } from "@mesh/shared/log/logger";
import { pushRequest, serviceKey } from "./push_request.ts";
import { SnapshotStage } from "./snapshot_stage.ts";
import type { PushContext } from "./push_context.ts";
import { EndpointIndex } from "./endpoint_index.ts";
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

Deno.test("SnapshotStage hands an endpoint-only request a copy of the snapshot with the newer endpoints", async () => {
  const w = world();
  const endpoints = new EndpointIndex(w.registry);
  w.registry.onEndpointEvent((event) => endpoints.update(event));
  w.apply(serviceEntry("ns", "a", "a.example", undefined, "10.0.0.1"));
  const stage = new SnapshotStage({
    build: () => w.push({ endpoints, version: "v1" }),
    endpoints: () => endpoints.snapshot(),
    log: silentLogger,
  });
  const handed: PushContext[] = [];
  stage.onPush((_request, push) => void handed.push(push));
  const first = stage.current();
  const addresses = (push: PushContext) =>
    [...push.endpointIndex.shards("a.example", "ns").byCluster.values()].flat().map((i) =>
      i.endpoint.address
    );
  assert.deepEqual(addresses(first), ["10.0.0.1"]);
  w.apply(serviceEntry("ns", "a", "a.example", undefined, "10.0.0.2"));
  assert.deepEqual(addresses(first), ["10.0.0.1"], "the published snapshot keeps its endpoints");
  await stage.handle(pushRequest(false, "endpoint", [serviceKey("ns", "a.example")], 0));
  assert.deepEqual(addresses(handed[0]), ["10.0.0.2"]);
  assert.equal(handed[0].version, "v1", "the same snapshot otherwise");
  assert.equal(stage.current(), handed[0]);
  assert.deepEqual(addresses(first), ["10.0.0.1"]);
});
