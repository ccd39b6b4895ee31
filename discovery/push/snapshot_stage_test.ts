import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { silentLogger } from "@mesh/shared/log/logger";
import { pushRequest, serviceKey } from "./push_request.ts";
import { SnapshotStage } from "./snapshot_stage.ts";
import type { PushContext } from "./push_context.ts";
import { EndpointIndex } from "./endpoint_index.ts";
import { networking, serviceEntry, world } from "./_test_support.ts";

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

Deno.test("SnapshotStage gives the loop a turn between building a snapshot and publishing it", async () => {
  const w = world();
  let turned = false;
  const stage = new SnapshotStage({
    build: () => {
      // A timer due at once: it runs only if the stage hands the loop a turn before it publishes.
      setTimeout(() => turned = true, 0);
      return w.push();
    },
    log: silentLogger,
  });
  await new Promise((resolve) => setTimeout(resolve, 0));
  turned = false;
  const first = stage.current();
  const seen: { turned: boolean; current: boolean }[] = [];
  stage.onPush((_request, push) => void seen.push({ turned, current: stage.current() === push }));
  const handled = stage.handle(pushRequest(true, "config", ["x"], 0));
  assert.equal(stage.current(), first, "nothing is published during the build's turn");
  await handled;
  assert.deepEqual(seen, [{ turned: true, current: true }]);
});

Deno.test("SnapshotStage keeps endpoints published during a build's turn rather than the build's older ones", async () => {
  const w = world();
  const endpoints = new EndpointIndex(w.registry);
  w.registry.onEndpointEvent((event) => endpoints.update(event));
  w.apply(serviceEntry("ns", "a", "a.example", undefined, "10.0.0.1"));
  const stage = new SnapshotStage({
    build: () => w.push({ endpoints }),
    endpoints: () => endpoints.snapshot(),
    log: silentLogger,
  });
  const full = stage.handle(pushRequest(true, "config", ["x"], 0));
  w.apply(serviceEntry("ns", "a", "a.example", undefined, "10.0.0.2"));
  await stage.handle(pushRequest(false, "endpoint", [serviceKey("ns", "a.example")], 0));
  await full;
  const addresses = [...stage.current().endpointIndex.shards("a.example", "ns").byCluster.values()].flat()
    .map((i) => i.endpoint.address);
  assert.deepEqual(addresses, ["10.0.0.2"]);
});

Deno.test("SnapshotStage sets only the problem series that changed since the snapshot it published before", async () => {
  const w = world();
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  const empty = (name: string) =>
    networking("ServiceEntry", "ns", name, {
      hosts: [`${name}.example`],
      ports: [{ number: 80, name: "http", protocol: "HTTP" }],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
    });
  for (let i = 0; i < 20; i++) w.apply(empty(`e${i}`));
  const stage = new SnapshotStage({ build: () => w.push(), log: silentLogger, metrics });
  const gauge = metrics.gauge("discovery_eds_no_instances");
  const set = gauge.set.bind(gauge);
  const written: string[] = [];
  gauge.set = ((...args: Parameters<typeof gauge.set>) => {
    written.push(JSON.stringify(args[0]));
    return set(...args);
  }) as typeof gauge.set;
  w.store.delete("ServiceEntry", "ns", "e3");
  w.apply(empty("new"));
  await stage.handle(pushRequest(true, "config", ["x"], 0));
  assert.deepEqual(written, [JSON.stringify({ cluster: "outbound|80||new.example" })]);
  const text = await metrics.render();
  assert.doesNotMatch(text, /e3\.example/);
  assert.match(text, /discovery_eds_no_instances\{cluster="outbound\|80\|\|new\.example"\} 1/);
  assert.match(text, /discovery_eds_no_instances\{cluster="outbound\|80\|\|e4\.example"\} 1/);
});
