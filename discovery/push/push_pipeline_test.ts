import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { EnvSettings } from "@mesh/shared/env/env_settings";
import { silentLogger } from "@mesh/shared/log/logger";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { createPushPipeline } from "./push_pipeline.ts";
import { MESH, networking, serviceEntry, type World, world } from "./_test_support.ts";

/** A push pipeline over the test world `w` with the settings `environment`. */
function pipelineOver(w: World, environment: Record<string, string>, metrics?: Metrics) {
  return createPushPipeline({
    store: w.store,
    registry: w.registry,
    mesh: () => MESH,
    domain: "cluster.local",
    env: new EnvSettings("discovery", environment),
    ...(metrics && { metrics }),
    log: silentLogger,
  });
}

Deno.test("The push pipeline turns changes into debounced snapshots for its listeners", async () => {
  const clock = FakeTimers.install({ now: 0 });
  try {
    const w = world();
    const pipeline = pipelineOver(w, {
      DISCOVERY_DEBOUNCE_AFTER: "100ms",
      DISCOVERY_ENABLE_EDS_DEBOUNCE: "false",
    }, new Metrics("discovery", { version: "t", tag: "t" }));
    const pushes: string[] = [];
    pipeline.stage.onPush((request, push) =>
      void pushes.push(`${request.full ? "full" : "eds"} services=${push.services().length}`)
    );
    assert.match(pipeline.stage.current().version, /\/1$/);

    w.apply(
      serviceEntry("ns", "a", "a.example"),
      networking("VirtualService", "ns", "vs", { hosts: ["a.example"] }),
    );
    await clock.tickAsync(99);
    assert.deepEqual(pushes, []);
    // The build and the publication are two turns of the loop; a fake clock puts the second 1 ms later.
    await clock.tickAsync(2);
    assert.deepEqual(pushes, ["full services=1"]);

    w.apply(networking("ServiceEntry", "ns", "sel", {
      hosts: ["sel.example"],
      ports: [{ number: 80, name: "http", protocol: "HTTP" }],
      resolution: "STATIC",
      workloadSelector: { labels: { app: "sel" } },
    }));
    await clock.tickAsync(101);
    w.apply(networking("WorkloadEntry", "ns", "w", { address: "10.3.0.1", labels: { app: "sel" } }));
    await clock.tickAsync(0);
    assert.deepEqual(
      pushes.slice(1),
      ["full services=2", "eds services=2"],
      "EDS bypasses the debounce when disabled",
    );
    assert.equal(pipeline.endpoints.shards("sel.example", "ns").version, 1);

    pipeline.close();
    w.apply(networking("VirtualService", "ns", "vs2", { hosts: ["b.example"] }));
    await clock.tickAsync(1_000);
    assert.equal(pushes.length, 3);
  } finally {
    clock.uninstall();
  }
});

Deno.test("DISCOVERY_ENABLE_{REDIS,MYSQL,THRIFT}_FILTER reach the snapshots the generators read", () => {
  const w = world();
  const pipeline = pipelineOver(w, {
    DISCOVERY_ENABLE_REDIS_FILTER: "true",
    DISCOVERY_ENABLE_THRIFT_FILTER: "1",
  });
  try {
    assert.deepEqual(pipeline.stage.current().protocolFilters, { redis: true, mysql: false, thrift: true });
  } finally {
    pipeline.close();
  }
});

Deno.test("DISCOVERY_INITIAL_FETCH_TIMEOUT and DISCOVERY_FILTER_GATEWAY_CLUSTER_CONFIG reach the snapshots", async (t) => {
  const snapshot = (environment: Record<string, string>) => {
    const w = world();
    const pipeline = pipelineOver(w, environment);
    try {
      const push = pipeline.stage.current();
      return { timeout: push.initialFetchTimeoutNs, filter: push.filterGatewayClusters };
    } finally {
      pipeline.close();
    }
  };
  await t.step("by default: no timeout (the field is left out) and no filtering", () => {
    assert.deepEqual(snapshot({}), { timeout: undefined, filter: false });
  });
  await t.step("given, even as 0s, the timeout is set; the filter follows its switch", () => {
    assert.deepEqual(snapshot({ DISCOVERY_INITIAL_FETCH_TIMEOUT: "0s" }), { timeout: 0n, filter: false });
    assert.deepEqual(
      snapshot({ DISCOVERY_INITIAL_FETCH_TIMEOUT: "250ms", DISCOVERY_FILTER_GATEWAY_CLUSTER_CONFIG: "true" }),
      { timeout: 250_000_000n, filter: true },
    );
  });
});

Deno.test("The #31 Envoy settings reach the snapshots the generators read, with their documented defaults", async (t) => {
  const snapshot = (environment: Record<string, string>) => {
    const w = world();
    const pipeline = pipelineOver(w, environment);
    try {
      const push = pipeline.stage.current();
      return {
        timeout: push.defaultRequestTimeoutNs,
        tcpExchange: push.tcpMetadataExchange,
        telemetryLabel: push.endpointTelemetryLabel,
        headless: push.headlessPodListeners,
        metadataCerts: push.allowMetadataCerts,
      };
    } finally {
      pipeline.close();
    }
  };
  await t.step("by default", () => {
    assert.deepEqual(snapshot({}), {
      timeout: 0n,
      tcpExchange: true,
      telemetryLabel: false,
      headless: true,
      metadataCerts: false,
    });
  });
  await t.step("each as set", () => {
    assert.deepEqual(
      snapshot({
        MESH_DEFAULT_REQUEST_TIMEOUT: "15s",
        DISCOVERY_ENABLE_TCP_METADATA_EXCHANGE: "false",
        DISCOVERY_ENDPOINT_TELEMETRY_LABEL: "true",
        DISCOVERY_ENABLE_HEADLESS_SERVICE_POD_LISTENERS: "false",
        DISCOVERY_ALLOW_METADATA_CERTS_DR_MUTUAL_TLS: "true",
      }),
      {
        timeout: 15_000_000_000n,
        tcpExchange: false,
        telemetryLabel: true,
        headless: false,
        metadataCerts: true,
      },
    );
  });
});

Deno.test("The push pipeline publishes a batch the store is writing only once it is whole", async () => {
  const clock = FakeTimers.install({ now: 0 });
  try {
    const w = world();
    const pipeline = pipelineOver(w, { DISCOVERY_DEBOUNCE_AFTER: "100ms" });
    const pushed: number[] = [];
    pipeline.stage.onPush((_request, push) => void pushed.push(push.services().length));
    let finish = () => {};
    const batch = w.store.batch(async () => {
      w.apply(serviceEntry("ns", "a", "a.example"));
      await new Promise<void>((resolve) => finish = resolve);
      w.apply(serviceEntry("ns", "b", "b.example"));
    });
    await clock.tickAsync(500);
    assert.deepEqual(pushed, [], "half a batch is never pushed");
    finish();
    await batch;
    await clock.tickAsync(250);
    assert.deepEqual(pushed, [2]);
    pipeline.close();
  } finally {
    clock.uninstall();
  }
});

Deno.test("The push pipeline's gate opens with a snapshot built after every source synced, events or none", async () => {
  const clock = FakeTimers.install({ now: 0 });
  try {
    const w = world();
    let unsynced: string | undefined = "registries not synced: Orchestrator";
    const pipeline = createPushPipeline({
      store: w.store,
      registry: w.registry,
      mesh: () => MESH,
      domain: "cluster.local",
      env: new EnvSettings("discovery", { DISCOVERY_DEBOUNCE_AFTER: "100ms" }),
      log: silentLogger,
      unsynced: () => unsynced,
    });
    const pushes: string[] = [];
    pipeline.stage.onPush((request, push) =>
      void pushes.push(`${Object.keys(request.reasons).join()} ${push.version}`)
    );
    assert.match(pipeline.gate.waiting() ?? "", /registries not synced: Orchestrator/);
    await clock.tickAsync(1_000);
    assert.deepEqual(pushes, [], "nothing is pushed while a source lists");

    // The listing ends with nothing that changes config (an empty cluster): the gate still gets its snapshot.
    unsynced = undefined;
    await clock.tickAsync(50 + 101);
    assert.equal(pushes.length, 1);
    assert.match(pushes[0], /^global .*\/2$/, "one full push of a snapshot built after the sync");
    assert.equal(pipeline.gate.open, true);
    assert.equal(pipeline.gate.waiting(), undefined);
    pipeline.close();
  } finally {
    clock.uninstall();
  }
});
