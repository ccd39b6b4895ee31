import assert from "node:assert/strict";
import { defaultMeshConfig } from "@mesh/shared/config/mesh/mesh_config";
import { EnvSettings } from "@mesh/shared/env/env_settings";
import { jsonResponse, Router } from "@mesh/shared/http/router";
import { type RunningServer, serveHttp } from "@mesh/shared/http/serve";
import { silentLogger } from "@mesh/shared/log/logger";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { buildInfo } from "@mesh/shared/version/build_info";
import { MemoryConfigStore } from "../config/memory_config_store.ts";
import { parseProxy } from "../model/proxy.ts";
import type { MemoryRegistry } from "../registry/memory_registry.ts";
import { buildRegistries } from "../registry/build_registries.ts";
import { networking } from "../registry/_test_support.ts";
import { EndpointIndex } from "../push/endpoint_index.ts";
import { buildPushContext } from "../push/push_context.ts";
import { MeshNetworkIndex } from "../push/network_index.ts";
import { SnapshotStage } from "../push/snapshot_stage.ts";
import { DebugInterface } from "./debug_interface.ts";
import { addModelDebugRoutes } from "./model_debug_routes.ts";
import { addMonitoringRoutes } from "./monitoring_routes.ts";
import { addReadyRoute, Readiness, syncedCheck } from "./readiness.ts";

const MESH = { ...defaultMeshConfig(), rootNamespace: "mesh-system" };

/** A discovery server's HTTP side on 127.0.0.1:0, on the same wiring server.ts uses. */
async function startServers() {
  const store = new MemoryConfigStore();
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  const { aggregate, serviceEntries, mock } = buildRegistries({
    registries: ["Mock"],
    clusterId: "Orchestrator",
    appNamespaces: [],
    defaultServiceExportTo: () => MESH.defaultServiceExportTo,
    store,
    log: silentLogger,
  });
  serviceEntries.start();
  const endpoints = new EndpointIndex(aggregate);
  const stage = new SnapshotStage({
    build: () =>
      buildPushContext({
        store,
        services: aggregate,
        mesh: MESH,
        domain: "cluster.local",
        endpoints,
        networks: new MeshNetworkIndex(
          { networks: { n1: { endpoints: [{ fromRegistry: "Orchestrator" }], gateways: [] } } },
          [],
          "Orchestrator",
        ),
      }),
    log: silentLogger,
    metrics,
  });
  const vm = parseProxy({ id: "sidecar~10.1.0.1~vm-1.apps~apps.svc.cluster.local" });
  const debug = new DebugInterface();
  addModelDebugRoutes(debug, {
    store,
    registry: aggregate,
    endpoints,
    push: () => stage.current(),
    rejected: () => [{
      file: "bad.yaml",
      line: 3,
      kind: "VirtualService",
      name: "x",
      errors: ["spec.hosts: required"],
    }],
    mesh: () => MESH,
    env: new EnvSettings("discovery", { DISCOVERY_DEBOUNCE_AFTER: "250ms" }),
    proxies: () => [vm],
  });
  const readiness = new Readiness([
    syncedCheck("config", () => store.synced, () => "config sources have not loaded yet"),
    syncedCheck(
      "registries",
      () => aggregate.hasSynced(),
      () => `waiting for ${aggregate.unsyncedRegistries().join(", ")}`,
    ),
  ], { metrics, startedAt: performance.now() });
  const http = debug.mount(addReadyRoute(new Router(), readiness));
  const monitoring = debug.mount(addMonitoringRoutes(new Router(), metrics, buildInfo("abc")));
  const servers: RunningServer[] = [
    await serveHttp("http", { hostname: "127.0.0.1", port: 0 }, http.handle, silentLogger),
    await serveHttp("monitoring", { hostname: "127.0.0.1", port: 0 }, monitoring.handle, silentLogger),
  ];
  return {
    store,
    metrics,
    mock: mock as MemoryRegistry,
    stage,
    debug,
    servers,
    close: () => Promise.all(servers.map((s) => s.shutdown())),
  };
}

// deno-lint-ignore no-explicit-any -- response bodies are checked field by field below
async function getJson(url: string): Promise<{ status: number; type: string | null; body: any }> {
  const response = await fetch(url);
  return { status: response.status, type: response.headers.get("content-type"), body: await response.json() };
}

Deno.test("The debug and monitoring servers answer every path over HTTP", async (t) => {
  const s = await startServers();
  const [http, monitoring] = s.servers.map((server) => server.url);
  try {
    await t.step("/ready is 503 with the reason until the config store has synced", async () => {
      const before = await getJson(`${http}/ready`);
      assert.equal(before.status, 503);
      assert.equal(
        before.body.error,
        "Not ready: config: config sources have not loaded yet; registries: waiting for External/Orchestrator",
      );
      assert.equal(before.body.reasons.length, 2);
      const startup = async () =>
        (await s.metrics.gauge("startup_duration_seconds").get()).values[0]?.value ?? 0;
      assert.equal(await startup(), 0);
      s.store.markSynced();
      const after = await getJson(`${http}/ready`);
      assert.deepEqual([after.status, after.body], [200, { ready: true }]);
      assert.ok(await startup() > 0);
    });

    s.store.apply(networking("ServiceEntry", "apps", "api", {
      hosts: ["api.apps.example"],
      ports: [{ number: 80, name: "http", protocol: "HTTP" }],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      endpoints: [{ address: "10.1.0.1", labels: { app: "api" } }],
    }));
    s.store.apply(networking("VirtualService", "apps", "api", { hosts: ["api.apps.example"], http: [] }));
    await s.stage.handle({ full: true, reasons: { config: 1 }, start: 0 });

    await t.step("/debug lists every path of its server with one line of help", async () => {
      for (const [base, own] of [[http, "/ready"], [monitoring, "/metrics"]]) {
        const { status, body } = await getJson(`${base}/debug`);
        assert.equal(status, 200);
        const paths = body.paths.map((p: { path: string }) => p.path);
        for (const p of ["/debug", "/debug/registryz", "/debug/configz", "/debug/env", own]) {
          assert.ok(paths.includes(p), p);
        }
        assert.ok(!paths.includes("/debug/"));
        assert.ok(body.paths.every((p: { help: string }) => p.help.length > 0 && !p.help.includes("\n")));
      }
    });

    await t.step("/debug/registryz lists services of every registry", async () => {
      const { body, type } = await getJson(`${http}/debug/registryz`);
      assert.equal(type, "application/json");
      assert.deepEqual(body.map((s: { hostname: string }) => s.hostname), ["api.apps.example"]);
      assert.equal(body[0].attributes.serviceRegistry, "External");
      assert.deepEqual(body[0].endpoints, [{
        address: "10.1.0.1",
        port: 80,
        cluster: "Orchestrator",
        network: "n1",
      }]);
      assert.deepEqual(Object.keys(body[0].clusterAddresses), ["Orchestrator"]);
      assert.deepEqual((await getJson(`${http}/debug/registryz?namespace=other`)).body, []);
    });

    await t.step("/debug/configz shows resources and rejected documents with reasons", async () => {
      const { body } = await getJson(`${http}/debug/configz`);
      assert.deepEqual(body.resources.map((r: { gvk: { kind: string } }) => r.gvk.kind).sort(), [
        "ServiceEntry",
        "VirtualService",
      ]);
      assert.deepEqual(body.rejected[0].errors, ["spec.hosts: required"]);
    });

    await t.step("/debug/endpointz and /debug/endpointShardz show endpoints", async () => {
      const endpointz = (await getJson(`${http}/debug/endpointz`)).body;
      assert.equal(endpointz[0].instances[0].address, "10.1.0.1");
      assert.equal(endpointz[0].instances[0].servicePort.port, 80);
      assert.equal(endpointz[0].instances[0].cluster, "Orchestrator");
      assert.equal(endpointz[0].instances[0].network, "n1", "the network its cluster is on (fromRegistry)");
      const shards = (await getJson(`${http}/debug/endpointShardz`)).body;
      assert.equal(shards["api.apps.example"].apps.shards.Orchestrator[0].address, "10.1.0.1");
      assert.equal(shards["api.apps.example"].apps.version, 1);
    });

    await t.step("/debug/push_status shows the snapshot's counts", async () => {
      const { body } = await getJson(`${monitoring}/debug/push_status`);
      assert.equal(body.discovery_services, 1);
      assert.equal(body.discovery_virt_services, 1);
    });

    await t.step("/debug/resourcesz lists kinds with counts", async () => {
      const { body } = await getJson(`${http}/debug/resourcesz`);
      const se = body.find((k: { kind: string }) => k.kind === "ServiceEntry");
      assert.deepEqual([se.group, se.count], ["networking.mesh.io", 1]);
    });

    await t.step("/debug/instancesz maps connected proxies to their instances", async () => {
      const { body } = await getJson(`${http}/debug/instancesz`);
      assert.deepEqual(Object.keys(body), ["vm-1.apps"]);
      assert.equal(body["vm-1.apps"][0].hostname, "api.apps.example");
    });

    await t.step("/debug/mesh and /debug/env show settings in effect", async () => {
      assert.equal((await getJson(`${http}/debug/mesh`)).body.rootNamespace, "mesh-system");
      const env = (await getJson(`${http}/debug/env`)).body;
      const debounce = env.find((v: { name: string }) => v.name === "DISCOVERY_DEBOUNCE_AFTER");
      assert.deepEqual([debounce.value, debounce.source], ["250ms", "environment"]);
    });

    await t.step("/metrics and /version are served on monitoring", async () => {
      const metrics = await (await fetch(`${monitoring}/metrics`)).text();
      assert.match(metrics, /discovery_services 1/);
      assert.equal((await getJson(`${monitoring}/version`)).body.revision, "abc");
    });

    await t.step("a path added after mounting is served on both servers with one call", async () => {
      s.debug.add("/debug/adsz", "Connected proxies", () => jsonResponse({ clients: [] }));
      for (const base of [http, monitoring]) {
        assert.deepEqual((await getJson(`${base}/debug/adsz`)).body, { clients: [] });
      }
      const index = (await getJson(`${http}/debug`)).body.paths.map((p: { path: string }) => p.path);
      assert.ok(index.includes("/debug/adsz"));
    });

    await t.step("errors are JSON with a message", async () => {
      const missing = await getJson(`${http}/debug/nope`);
      assert.equal(missing.status, 404);
      assert.match(missing.body.error, /No handler for path "\/debug\/nope"/);
      const wrongMethod = await fetch(`${http}/debug/registryz`, { method: "POST" });
      assert.equal(wrongMethod.status, 405);
      assert.match((await wrongMethod.json()).error, /Method POST is not allowed/);
    });
  } finally {
    await s.close();
  }
});
