import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import type { Resource } from "@mesh/shared/config/resource";
import { soleLeader } from "@mesh/shared/lifecycle/duty_gate";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { type ApiObject, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { DistributionTracker } from "../xds/distribution_tracker.ts";
import { loadOrchConfig } from "../orch/orch_client.ts";
import { type OrchHttp, orchHttp } from "../orch/orch_http.ts";
import { DistributionController } from "./distribution_controller.ts";
import { createDistributionStatus } from "./distribution_status.ts";
import {
  DistributionReporter,
  REPORT_FIELD,
  REPORT_LABEL,
  type SnapshotView,
} from "./distribution_reporter.ts";
import { StatusWriter } from "./status_writer.ts";
import type { ReplicaLivenessView } from "../model/replica_liveness_view.ts";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";
const CART = "networking.mesh.io/v1beta1/virtualservices/shop/cart";

function snapshot(version: string, generations: Record<string, number>): SnapshotView {
  return {
    version,
    configs: (kind) =>
      kind !== "VirtualService" ? [] : Object.entries(generations).map(([name, generation]): Resource => ({
        gvk: { group: "networking.mesh.io", version: "v1alpha3", kind },
        meta: { name, namespace: "shop", generation },
        spec: {},
      })),
  };
}

const noHttp: OrchHttp = () => Promise.reject(new Error("not used"));

Deno.test("DistributionReporter counts the proxies that acknowledged a push holding a resource's generation", () => {
  const tracker = new DistributionTracker(60_000, () => 0);
  const reporter = new DistributionReporter({
    reporter: "discovery-a",
    namespace: "mesh-system",
    tracker,
    http: noHttp,
    log: new RecordingLogger(),
  });
  tracker.recordPush("v1", undefined);
  reporter.observe(snapshot("v1", { cart: 1 }));
  for (const connection of ["c1", "c2", "c3"]) {
    tracker.recordAck(connection, `proxy-${connection}`, CDS, "v1");
    tracker.recordAck(connection, `proxy-${connection}`, LDS, "v1");
  }
  assert.deepEqual(reporter.report(), {
    reporter: "discovery-a",
    dataPlaneCount: 3,
    inProgressResources: { [`${CART}/1`]: 3 },
  });

  tracker.recordPush("v2", new Set(["VirtualService/shop/cart"]));
  reporter.observe(snapshot("v2", { cart: 2 }));
  tracker.recordAck("c1", "proxy-c1", CDS, "v2");
  tracker.recordAck("c1", "proxy-c1", LDS, "v2");
  // c2 has only part of v2: it does not have generation 2 yet.
  tracker.recordAck("c2", "proxy-c2", CDS, "v2");
  assert.deepEqual(reporter.report().inProgressResources, { [`${CART}/2`]: 1 });
  assert.equal(reporter.generationOf("VirtualService/shop/cart"), 2);

  reporter.observe(snapshot("v3", {}));
  assert.deepEqual(reporter.report().inProgressResources, {}, "a deleted resource leaves the report");
});

function reportConfigMap(
  reporter: string,
  dataPlaneCount: number,
  resources: Record<string, number>,
): ApiObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `${reporter}-distribution`,
      namespace: "mesh-system",
      labels: { [REPORT_LABEL]: "true" },
    },
    data: { [REPORT_FIELD]: JSON.stringify({ reporter, dataPlaneCount, inProgressResources: resources }) },
  };
}

async function withController(
  test: (ctx: {
    server: OrchApiServer;
    controller: DistributionController;
    writer: StatusWriter;
    clock: FakeTimers.Clock;
    generations: Map<string, number>;
    log: RecordingLogger;
  }) => Promise<void>,
  options: { liveness?: ReplicaLivenessView } = {},
): Promise<void> {
  const server = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "distribution_status_" });
  await Deno.writeTextFile(`${dir}/kubeconfig`, server.kubeconfig());
  const http = orchHttp(loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }), 2_000);
  const clock = FakeTimers.createClock(Date.parse("2026-01-01T00:00:00Z"));
  const writer = new StatusWriter({ http, qps: 1_000, burst: 1_000, log: new RecordingLogger() });
  const generations = new Map<string, number>();
  const log = new RecordingLogger();
  const controller = new DistributionController({
    gate: soleLeader("mesh-status-leader"),
    namespace: "mesh-system",
    http,
    writer,
    generationOf: (key) => generations.get(key),
    log,
    timers: timersOf(clock),
    now: () => new Date(clock.now),
    ...options,
  });
  try {
    await test({ server, controller, writer, clock, generations, log });
  } finally {
    controller.stop();
    writer.stop();
    await Deno.remove(dir, { recursive: true });
    await server.close();
  }
}

function cart(hosts: string[]): ApiObject {
  return {
    apiVersion: "networking.mesh.io/v1alpha3",
    kind: "VirtualService",
    metadata: { name: "cart", namespace: "shop" },
    spec: { hosts },
  };
}

Deno.test("DistributionController adds up every replica's report into the Reconciled condition", async () => {
  await withController(async ({ server, controller, writer, generations }) => {
    server.apply(cart(["cart"]));
    generations.set("VirtualService/shop/cart", 1);
    server.apply(reportConfigMap("discovery-a", 2, { [`${CART}/1`]: 1 }));
    server.apply(reportConfigMap("discovery-b", 3, { [`${CART}/1`]: 3 }));
    await controller.tick();
    await writer.idle();
    const status = server.apply(cart(["cart"])).status as Record<string, unknown>;
    assert.equal(status.observedGeneration, 1);
    assert.deepEqual(status.conditions, [{
      type: "Reconciled",
      status: "False",
      lastProbeTime: "2026-01-01T00:00:00Z",
      lastTransitionTime: "2026-01-01T00:00:00Z",
      message: "4/5 proxies up to date.",
      observedGeneration: 1,
    }]);

    server.apply(reportConfigMap("discovery-a", 2, { [`${CART}/1`]: 2 }));
    await controller.tick();
    await writer.idle();
    const done =
      (server.apply(cart(["cart"])).status as { conditions: Record<string, unknown>[] }).conditions[0];
    assert.equal(done.status, "True");
    assert.equal(done.message, "5/5 proxies up to date.");
  });
});

Deno.test("DistributionController stops counting a replica it has not heard from for a minute", async () => {
  await withController(async ({ server, controller, writer, clock, generations }) => {
    server.apply(cart(["cart"]));
    generations.set("VirtualService/shop/cart", 1);
    server.apply(reportConfigMap("discovery-a", 2, { [`${CART}/1`]: 2 }));
    server.apply(reportConfigMap("discovery-gone", 4, { [`${CART}/1`]: 0 }));
    await controller.tick();
    await writer.idle();
    clock.tick(30_000);
    server.apply(reportConfigMap("discovery-a", 2, { [`${CART}/1`]: 2 }));
    await controller.tick();
    clock.tick(31_000);
    await controller.tick();
    await writer.idle();
    const condition = (server.apply(cart(["cart"])).status as { conditions: Record<string, unknown>[] })
      .conditions[0];
    assert.equal(condition.message, "2/2 proxies up to date.");

    // Its report stays as it was: read again, it still does not count, until the replica writes a new one.
    clock.tick(1_000);
    await controller.tick();
    await writer.idle();
    assert.equal(messageOf(server.apply(cart(["cart"]))), "2/2 proxies up to date.");
    server.apply(reportConfigMap("discovery-gone", 4, { [`${CART}/1`]: 1 }));
    await controller.tick();
    await writer.idle();
    assert.equal(messageOf(server.apply(cart(["cart"]))), "3/6 proxies up to date.");
  });
});

Deno.test("DistributionController stops counting a replica whose liveness ran out, without waiting a minute", async () => {
  const expired = new Set<string>();
  const liveness: ReplicaLivenessView = {
    expiry: (replica) => Promise.resolve({ expired: expired.has(replica), at: 0 }),
    retain() {},
  };
  await withController(async ({ server, controller, writer, clock, generations }) => {
    server.apply(cart(["cart"]));
    generations.set("VirtualService/shop/cart", 1);
    server.apply(reportConfigMap("discovery-a", 2, { [`${CART}/1`]: 2 }));
    server.apply(reportConfigMap("discovery-dead", 1, { [`${CART}/1`]: 1 }));
    await controller.tick();
    await writer.idle();
    assert.equal(messageOf(server.apply(cart(["cart"]))), "3/3 proxies up to date.");
    expired.add("discovery-dead");
    clock.tick(5_000);
    await controller.tick();
    await writer.idle();
    assert.equal(messageOf(server.apply(cart(["cart"]))), "2/2 proxies up to date.");
  }, { liveness });
});

function messageOf(object: ApiObject): unknown {
  return (object.status as { conditions: Record<string, unknown>[] }).conditions[0].message;
}

Deno.test("DistributionController leaves a resource alone once its spec moved past the reported generation", async () => {
  await withController(async ({ server, controller, writer, generations }) => {
    server.apply(cart(["cart"]));
    server.apply(cart(["cart", "cart.shop"]));
    generations.set("VirtualService/shop/cart", 2);
    server.apply(reportConfigMap("discovery-a", 2, { [`${CART}/1`]: 2 }));
    await controller.tick();
    await writer.idle();
    assert.equal(server.apply(cart(["cart", "cart.shop"])).status, undefined);
    assert.equal(server.requests.filter((r) => r.includes("/virtualservices/")).length, 0);
  });
});

Deno.test("DistributionController skips an unreadable report, logging it once, and counts the others", async () => {
  await withController(async ({ server, controller, writer, generations, log }) => {
    server.apply(cart(["cart"]));
    generations.set("VirtualService/shop/cart", 1);
    server.apply(reportConfigMap("discovery-a", 2, { [`${CART}/1`]: 2 }));
    server.apply({
      ...reportConfigMap("discovery-b", 1, {}),
      data: { [REPORT_FIELD]: '{"reporter":"discovery-b","dataPlaneCount":"many"}' },
    });
    await controller.tick();
    await controller.tick();
    await writer.idle();
    const condition = (server.apply(cart(["cart"])).status as { conditions: Record<string, unknown>[] })
      .conditions[0];
    assert.equal(condition.message, "2/2 proxies up to date.");
    assert.equal(log.lines.filter((l) => l.msg.startsWith("distribution report unreadable")).length, 1);
  });
});

Deno.test("Distribution status refuses a POD_NAME that cannot name its report ConfigMap", () => {
  const writer = new StatusWriter({ http: noHttp, qps: 1, burst: 1, log: new RecordingLogger() });
  const options = {
    http: noHttp,
    writer,
    gate: soleLeader("mesh-status-leader"),
    namespace: "mesh-system",
    log: new RecordingLogger(),
  };
  assert.throws(
    () => createDistributionStatus({ ...options, reporter: "Discovery_A" }),
    /POD_NAME "Discovery_A" cannot name this replica's distribution report: expected a DNS subdomain/,
  );
  assert.ok(createDistributionStatus({ ...options, reporter: "discovery-7d9f.x" }));
});
