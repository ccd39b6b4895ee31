import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { type ApiObject, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { loadOrchConfig } from "../orch/orch_client.ts";
import { type OrchHttp, orchHttp, type OrchHttpRequest } from "../orch/orch_http.ts";
import { StatusWriter, type WriteOutcome } from "./status_writer.ts";

const VS = { group: "networking.mesh.io", version: "v1alpha3", plural: "virtualservices", namespace: "shop" };

function virtualService(name: string, hosts: string[]): ApiObject {
  return {
    apiVersion: "networking.mesh.io/v1alpha3",
    kind: "VirtualService",
    metadata: { name, namespace: "shop" },
    spec: { hosts },
  };
}

/** An OrchHttp to `server`, through a kubeconfig file as the server reads it. */
async function httpTo(server: OrchApiServer): Promise<{ http: OrchHttp; cleanup: () => Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "status_writer_" });
  await Deno.writeTextFile(`${dir}/kubeconfig`, server.kubeconfig());
  const kc = loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" });
  return { http: orchHttp(kc, 2_000), cleanup: () => Deno.remove(dir, { recursive: true }) };
}

/** Runs `test` with a started API server and a writer to it; every outcome is recorded. */
async function withWriter(
  test: (ctx: {
    server: OrchApiServer;
    writer: StatusWriter;
    http: OrchHttp;
    outcomes: WriteOutcome[];
    hook: { beforePut?: (request: OrchHttpRequest) => void };
  }) => Promise<void>,
): Promise<void> {
  const server = OrchApiServer.start();
  const { http: direct, cleanup } = await httpTo(server);
  const hook: { beforePut?: (request: OrchHttpRequest) => void } = {};
  const http: OrchHttp = (request) => {
    if (request.method === "PUT") hook.beforePut?.(request);
    return direct(request);
  };
  const outcomes: WriteOutcome[] = [];
  const writer = new StatusWriter({
    http,
    qps: 1_000,
    burst: 1_000,
    log: new RecordingLogger(),
    retryMs: 5,
    onOutcome: (_ref, _part, outcome) => outcomes.push(outcome),
  });
  try {
    await test({ server, writer, http, outcomes, hook });
  } finally {
    writer.stop();
    await cleanup();
    await server.close();
  }
}

Deno.test("StatusWriter writes one field of status and leaves the spec and the other fields alone", async () => {
  await withWriter(async ({ server, writer, outcomes }) => {
    server.apply(virtualService("cart", ["cart"]));
    server.apply({ ...virtualService("cart", ["cart"]), status: { other: "kept" } }, "status");
    writer.writeField({ ...VS, name: "cart", generation: 1 }, "validationMessages", [{ code: "IST0101" }]);
    await writer.idle();
    assert.deepEqual(outcomes, ["written"]);
    const stored = server.apply(virtualService("cart", ["cart"]));
    assert.deepEqual(stored.status, { other: "kept", validationMessages: [{ code: "IST0101" }] });
    assert.equal((stored.metadata as { generation?: number }).generation, 1);
  });
});

Deno.test("StatusWriter retries a conflicting write from a fresh read and keeps what the other writer wrote", async () => {
  await withWriter(async ({ server, writer, outcomes, hook }) => {
    server.apply(virtualService("cart", ["cart"]));
    let raced = false;
    hook.beforePut = () => {
      if (raced) return;
      raced = true;
      server.apply({ ...virtualService("cart", ["cart"]), status: { other: "raced in" } }, "status");
    };
    writer.writeField({ ...VS, name: "cart", generation: 1 }, "mine", "written");
    await writer.idle();
    assert.deepEqual(outcomes, ["written"]);
    const puts = server.requests.filter((r) => r.startsWith("PUT ") && r.includes("/status"));
    assert.equal(puts.length, 2, "the first PUT conflicted and was sent again after a new read");
    assert.deepEqual(server.apply(virtualService("cart", ["cart"])).status, {
      other: "raced in",
      mine: "written",
    });
  });
});

Deno.test("StatusWriter never writes status over a spec newer than the generation it describes", async () => {
  await withWriter(async ({ server, writer, outcomes, hook }) => {
    server.apply(virtualService("cart", ["cart"]));
    let changed = false;
    hook.beforePut = () => {
      if (changed) return;
      changed = true;
      server.apply(virtualService("cart", ["cart", "cart.shop"]));
    };
    writer.writeField({ ...VS, name: "cart", generation: 1 }, "mine", "about generation 1");
    await writer.idle();
    assert.deepEqual(outcomes, ["stale"]);
    const stored = server.apply(virtualService("cart", ["cart", "cart.shop"]));
    assert.equal((stored.metadata as { generation?: number }).generation, 2);
    assert.equal(stored.status, undefined);
  });
});

Deno.test("StatusWriter retries after the API server answers 500, and writes once it recovers", async () => {
  await withWriter(async ({ server, writer, outcomes }) => {
    server.apply(virtualService("cart", ["cart"]));
    let failures = 3;
    server.intercept = () =>
      failures-- > 0
        ? Response.json({ kind: "Status", code: 500, message: "etcd is down" }, { status: 500 })
        : undefined;
    writer.writeField({ ...VS, name: "cart", generation: 1 }, "mine", "after the outage");
    await waitFor(() => outcomes.includes("written"), "the write after three failures");
    assert.deepEqual(outcomes, ["failed", "failed", "failed", "written"]);
    assert.deepEqual(server.apply(virtualService("cart", ["cart"])).status, { mine: "after the outage" });
  });
});

Deno.test("StatusWriter writes status of an object kept under Istio's group name", async () => {
  await withWriter(async ({ server, writer, outcomes }) => {
    server.apply({ ...virtualService("cart", ["cart"]), apiVersion: "networking.istio.io/v1alpha3" });
    writer.writeField({ ...VS, name: "cart", generation: 1 }, "mine", "found");
    await writer.idle();
    assert.deepEqual(outcomes, ["written"]);
  });
});

Deno.test("StatusWriter sends at most the burst at once, then requests at the QPS", async () => {
  const clock = FakeTimers.createClock();
  const sentAt: number[] = [];
  const objects = new Map<
    string,
    { metadata: { generation: number; resourceVersion: string }; status?: unknown }
  >();
  // The API server's part played in memory, so every wait is the fake clock's.
  const http: OrchHttp = (request) => {
    sentAt.push(clock.now);
    const path = request.path.replace(/\/status$/, "");
    const object = objects.get(path) ?? { metadata: { generation: 1, resourceVersion: "1" } };
    objects.set(path, object);
    if (request.method === "PUT") object.status = (request.body as { status: unknown }).status;
    return Promise.resolve({ status: 200, body: structuredClone(object) });
  };
  const writer = new StatusWriter({
    http,
    qps: 2,
    burst: 3,
    log: new RecordingLogger(),
    timers: timersOf(clock),
  });
  for (let i = 0; i < 5; i++) writer.writeField({ ...VS, name: `vs-${i}`, generation: 1 }, "mine", i);
  for (let step = 0; step < 100 && writer.pending > 0; step++) await clock.tickAsync(100);
  writer.stop();
  assert.equal(writer.pending, 0);
  assert.equal(sentAt.length, 10, "a read and a write for each of five objects");
  // A token bucket: in any window of t ms at most burst + qps·t/1000 requests.
  for (let i = 0; i < sentAt.length; i++) {
    for (let j = i; j < sentAt.length; j++) {
      assert.ok(j - i + 1 <= 3 + (2 * (sentAt[j] - sentAt[i])) / 1000, `requests ${i}..${j} at ${sentAt}`);
    }
  }
  assert.deepEqual(sentAt.slice(0, 3), [0, 0, 0], "the burst goes at once");
  assert.equal(sentAt.at(-1), 3_500, "the other seven follow at two a second");
});

Deno.test("StatusWriter drops a write once the duty that queued it is lost, before its next request", async () => {
  const clock = FakeTimers.createClock();
  const sent: string[] = [];
  const http: OrchHttp = (request) => {
    sent.push(request.method);
    return Promise.resolve({ status: 200, body: { metadata: { generation: 1, resourceVersion: "1" } } });
  };
  const outcomes: WriteOutcome[] = [];
  const writer = new StatusWriter({
    http,
    qps: 1,
    burst: 1,
    log: new RecordingLogger(),
    timers: timersOf(clock),
    onOutcome: (_ref, _part, outcome) => outcomes.push(outcome),
  });
  const duty = new AbortController();
  writer.writeField({ ...VS, name: "cart", generation: 1 }, "mine", "while leading", duty.signal);
  await clock.tickAsync(0);
  assert.deepEqual(sent, ["GET"], "the read took the only token; the write waits for the next");
  duty.abort();
  await clock.tickAsync(2_000);
  assert.deepEqual(sent, ["GET"]);
  assert.deepEqual(outcomes, ["dropped"]);
  writer.writeField({ ...VS, name: "cart", generation: 1 }, "mine", "after losing", duty.signal);
  await clock.tickAsync(2_000);
  assert.deepEqual(sent, ["GET"], "nothing is queued for a lost duty");
  writer.stop();
});
