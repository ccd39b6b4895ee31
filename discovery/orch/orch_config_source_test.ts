import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { KINDS } from "@mesh/shared/config/kinds";
import { silentLogger } from "@mesh/shared/log/logger";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { type ApiObject, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { waitFor } from "../config/_test_support.ts";
import { MemoryConfigStore } from "../config/memory_config_store.ts";
import { loadOrchConfig } from "./orch_client.ts";
import { RateLimiter } from "./rate_limiter.ts";
import { OrchConfigSource } from "./orch_config_source.ts";
import type { JobMessage, JobWorker } from "@mesh/shared/process/off_thread_jobs";
import { judgeOrchObject, OFF_THREAD_OBJECT_CHARS, type OrchObjectJob } from "./orch_object_verdict.ts";

function virtualService(group: string, name: string, host: unknown): ApiObject {
  return {
    apiVersion: `${group}/v1beta1`,
    kind: "VirtualService",
    metadata: { name, namespace: "shop" },
    spec: { hosts: [host], http: [{ route: [{ destination: { host: "ratings" } }] }] },
  };
}

async function withSource(
  api: OrchApiServer,
  fn: (source: OrchConfigSource, store: MemoryConfigStore) => Promise<void>,
  extra: Partial<ConstructorParameters<typeof OrchConfigSource>[0]> = {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "mesh_orch_cfg_" });
  await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
  const store = new MemoryConfigStore();
  const source = new OrchConfigSource({
    kubeConfig: loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }),
    store,
    limiter: new RateLimiter(1000, 100),
    log: silentLogger,
    retryMs: 50,
    ...extra,
  });
  try {
    source.start();
    await fn(source, store);
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("Mesh custom resources reach the store; an invalid one is rejected alone and shown", async () => {
  const api = OrchApiServer.start();
  try {
    api.apply(virtualService("networking.mesh.io", "good", "ratings"));
    api.apply(virtualService("networking.mesh.io", "bad", 42));
    api.apply(virtualService("networking.istio.io", "istio", "reviews"));
    await withSource(api, async (source, store) => {
      await waitFor(() => source.synced, "the first sync");
      assert.deepEqual(store.list("VirtualService").map((r) => r.meta.name).sort(), ["good", "istio"]);
      const [rejected] = source.rejected();
      assert.equal(rejected.name, "bad");
      assert.match(rejected.errors.join(), /spec\.hosts\[0\]/);
      api.apply(virtualService("networking.mesh.io", "bad", "fixed"));
      await waitFor(() => store.get("VirtualService", "shop", "bad") !== undefined, "the fixed object");
      assert.deepEqual(source.rejected(), []);
    });
  } finally {
    await api.close();
  }
});

Deno.test("A name under both groups stays until neither has it; ours wins while both do", async () => {
  const api = OrchApiServer.start();
  try {
    api.apply(virtualService("networking.mesh.io", "vs", "ours"));
    api.apply(virtualService("networking.istio.io", "vs", "istio"));
    await withSource(api, async (source, store) => {
      await waitFor(() => source.synced, "the first sync");
      const hosts = () =>
        (store.get("VirtualService", "shop", "vs")?.spec as { hosts?: string[] } | undefined)?.hosts;
      assert.deepEqual(hosts(), ["ours"]);
      api.delete("networking.mesh.io/v1beta1", "VirtualService", "shop", "vs");
      await waitFor(() => hosts()?.[0] === "istio", "the Istio group's version");
      api.delete("networking.istio.io/v1beta1", "VirtualService", "shop", "vs");
      await waitFor(() => store.get("VirtualService", "shop", "vs") === undefined, "the deletion");
    });
  } finally {
    await api.close();
  }
});

const OURS = ["networking.mesh.io", "security.mesh.io"];
const ISTIO = ["networking.istio.io", "security.istio.io"];

for (const [installed, missing] of [["Istio's", OURS], ["our", ISTIO]] as const) {
  Deno.test(`With only ${installed} API groups installed the source syncs, and the others are picked up once installed`, async () => {
    const api = OrchApiServer.start({ absentGroups: missing });
    const clock = FakeTimers.createClock();
    const log = new RecordingLogger();
    // Fake time moves only when the test says: each poll fires what is due now, never a recheck.
    const until = (condition: () => boolean, what: string) =>
      waitFor(() => {
        clock.tick(0);
        return condition();
      }, what);
    const present = missing === OURS ? ISTIO : OURS;
    try {
      api.apply(virtualService(`${present[0]}`, "before", "ratings"));
      await withSource(api, async (source, store) => {
        await until(() => source.synced, "a sync on the installed groups alone");
        assert.ok(store.get("VirtualService", "shop", "before"));
        assert.equal(source.absentKinds().length, KINDS.length);
        // A recheck that still finds nothing logs nothing new.
        clock.tick(60_000);
        await until(
          () => clock.countTimers() === KINDS.length,
          "every recheck to find nothing and wait again",
        );
        for (const group of missing) api.install(group);
        api.apply(virtualService(missing[0], "after", "reviews"));
        clock.tick(60_000);
        await until(
          () => store.get("VirtualService", "shop", "after") !== undefined,
          "the newly installed kind",
        );
        assert.deepEqual(source.absentKinds(), []);
        assert.equal(log.matching("info", "does not serve").length, KINDS.length, "logged once per kind");
        assert.equal(log.matching("warn", "failed").length, 0, "a missing kind is not a failure");
      }, { log, timers: timersOf(clock) });
    } finally {
      await api.close();
    }
  });
}

/** A VirtualService of `routes` regex routes, `marker` in its hosts; its JSON passes the worker's threshold. */
function largeVirtualService(marker: string, badRegexAt = -1, routes = 800): ApiObject {
  const object: ApiObject = {
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "VirtualService",
    metadata: { name: "big", namespace: "shop" },
    spec: {
      hosts: [marker],
      http: Array.from({ length: routes }, (_, i) => ({
        match: [{ uri: { regex: i === badRegexAt ? "/api/(unclosed" : `/api/v${i}/(users|items)/[0-9]+` } }],
        route: [{ destination: { host: "ratings" } }],
      })),
    },
  };
  assert.ok(JSON.stringify(object).length >= OFF_THREAD_OBJECT_CHARS, "the object is judged in the worker");
  return object;
}

/** A worker of the test's: holds each job until the test answers it, or fails it. */
class HeldWorker implements JobWorker {
  onmessage: ((event: MessageEvent) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  readonly jobs: JobMessage<OrchObjectJob>[] = [];
  postMessage(message: unknown): void {
    this.jobs.push(message as JobMessage<OrchObjectJob>);
  }
  terminate(): void {}
  /** Answers the oldest job with the real judgement. */
  answer(): void {
    const { id, job } = this.jobs.shift()!;
    this.onmessage!({ data: { id, ok: true, result: judgeOrchObject(job) } } as MessageEvent);
  }
  /** Fails as a worker that threw out of its handler. */
  die(): void {
    this.jobs.shift();
    this.onerror!({ message: "Uncaught RangeError: out of memory", preventDefault() {} } as ErrorEvent);
  }
}

const hostsOf = (store: MemoryConfigStore, name: string) =>
  (store.get("VirtualService", "shop", name)?.spec as { hosts?: string[] } | undefined)?.hosts;

Deno.test("A large object is judged off the event loop: its kind syncs once it is judged, and later versions replace it in order", async () => {
  const api = OrchApiServer.start();
  const workers: HeldWorker[] = [];
  try {
    api.apply(largeVirtualService("v1"));
    await withSource(api, async (source, store) => {
      const applied: string[] = [];
      const apply = store.apply.bind(store);
      store.apply = (resource) => {
        if (resource.meta.name === "big") applied.push((resource.spec as { hosts: string[] }).hosts[0]);
        return apply(resource);
      };
      await waitFor(() => workers[0]?.jobs.length === 1, "the first version's job");
      assert.match(
        workers[0].jobs[0].job.origin,
        /^orchestrator:networking\.mesh\.io\/virtualservices\/shop\/big$/,
      );
      // Events of one watch arrive in order: once "after-N" is stored, every change to "big" before it was seen.
      api.apply({ ...largeVirtualService("v2-invalid"), spec: { hosts: [42] } });
      api.apply(virtualService("networking.mesh.io", "after-1", "ratings"));
      await waitFor(
        () => store.get("VirtualService", "shop", "after-1") !== undefined,
        "the small object after v2",
      );
      api.apply(largeVirtualService("v3"));
      api.apply(virtualService("networking.mesh.io", "after-2", "ratings"));
      await waitFor(
        () => store.get("VirtualService", "shop", "after-2") !== undefined,
        "the small object after v3",
      );
      assert.equal(source.synced, false, "the first list's object is still being judged");
      assert.equal(hostsOf(store, "big"), undefined);
      assert.equal(workers[0].jobs.length, 1, "v2 and v3 wait behind v1, not beside it");
      workers[0].answer();
      await waitFor(() => workers[0].jobs.length === 1, "v3's job, the latest change");
      assert.equal(workers[0].jobs[0].job.text.includes('"v3"'), true);
      assert.equal(source.synced, false);
      workers[0].answer();
      await waitFor(() => source.synced, "the sync, once the listed object is judged");
      assert.deepEqual(applied, ["v3"], "v1's verdict came after v3 replaced it, and v2 never ran");
      assert.deepEqual(source.rejected(), []);
      assert.equal(hostsOf(store, "big")![0], "v3");
      assert.equal(workers.length, 1, "one worker for every job");
    }, { spawnWorker: () => (workers.push(new HeldWorker()), workers.at(-1)!) });
  } finally {
    await api.close();
  }
});

Deno.test("A large object whose judgement fails is refused with why, and its last good version stays", async () => {
  const api = OrchApiServer.start();
  const log = new RecordingLogger();
  const workers: HeldWorker[] = [];
  try {
    api.apply(virtualService("networking.mesh.io", "big", "small-v1"));
    await withSource(api, async (source, store) => {
      await waitFor(() => source.synced, "the first sync");
      api.apply(largeVirtualService("v2"));
      await waitFor(() => workers[0]?.jobs.length === 1, "the large version's job");
      workers[0].die();
      await waitFor(() => source.rejected().length === 1, "the refusal");
      assert.deepEqual(source.rejected()[0].errors, [
        "orchestrator:networking.mesh.io/virtualservices/shop/big: not validated: " +
        "The worker failed: Uncaught RangeError: out of memory",
      ]);
      assert.deepEqual(hostsOf(store, "big"), ["small-v1"]);
      assert.equal(log.matching("warn", "orchestrator config rejected").length, 1);
      api.apply(largeVirtualService("v3"));
      await waitFor(() => workers[1]?.jobs.length === 1, "a new worker for the next version");
      workers[1].answer();
      await waitFor(() => hostsOf(store, "big")?.[0] === "v3", "the next version");
      assert.deepEqual(source.rejected(), []);
    }, { log, spawnWorker: () => (workers.push(new HeldWorker()), workers.at(-1)!) });
  } finally {
    await api.close();
  }
});

Deno.test("The worker judges large objects as the event loop judges small ones: valid ones stored, invalid ones refused with the field", async () => {
  const api = OrchApiServer.start();
  try {
    api.apply(largeVirtualService("listed"));
    await withSource(api, async (source, store) => {
      await waitFor(() => source.synced, "the first sync, the large object judged");
      const spec = store.get("VirtualService", "shop", "big")?.spec as { http: unknown[]; hosts: string[] };
      assert.deepEqual([spec.hosts[0], spec.http.length], ["listed", 800]);
      api.apply(largeVirtualService("bad", 500));
      await waitFor(() => source.rejected().length === 1, "the refusal of a bad regex at route 500");
      assert.match(
        source.rejected()[0].errors.join(),
        /shop\/big: spec\.http\[500\]\.match\[0\]\.uri\.regex: /,
      );
      assert.equal(hostsOf(store, "big")![0], "listed", "the last good version stays");
    });
  } finally {
    await api.close();
  }
});

Deno.test("An EnvoyFilter nested 3,000 levels deep is refused alone, and the objects after it still arrive", async () => {
  // It passed validation and then failed the store's structured clone, with an exception that ended the server.
  const api = OrchApiServer.start();
  try {
    let value: unknown = "x";
    for (let i = 0; i < 3_000; i++) value = { a: value };
    api.apply({
      apiVersion: "networking.mesh.io/v1alpha3",
      kind: "EnvoyFilter",
      metadata: { name: "deep", namespace: "shop" },
      spec: {
        configPatches: [{ applyTo: "CLUSTER", patch: { operation: "MERGE", value: { metadata: value } } }],
      },
    });
    api.apply(virtualService("networking.mesh.io", "after", "ratings"));
    await withSource(api, async (source, store) => {
      await waitFor(() => source.synced, "the first sync");
      assert.ok(store.get("VirtualService", "shop", "after"));
      assert.equal(store.get("EnvoyFilter", "shop", "deep"), undefined);
      const [rejected] = source.rejected();
      assert.equal(rejected.name, "deep");
      assert.match(
        rejected.errors[0],
        /^orchestrator:networking\.mesh\.io\/envoyfilters\/shop\/deep: spec\.configPatches\[0\]\.patch\.value\.metadata(\.a){94}: nested more than 100 levels deep; at most 100 are accepted$/,
      );
    });
  } finally {
    await api.close();
  }
});

Deno.test("An object whose handling throws is left out and logged, and the watch goes on", async () => {
  const api = OrchApiServer.start();
  const log = new RecordingLogger();
  try {
    api.apply(virtualService("networking.mesh.io", "boom", "ratings"));
    api.apply(virtualService("networking.mesh.io", "fine", "reviews"));
    await withSource(api, async (source, store) => {
      const apply = store.apply.bind(store);
      store.apply = (resource) => {
        if (resource.meta.name === "boom") throw new RangeError("the store could not copy it");
        return apply(resource);
      };
      await waitFor(() => source.synced, "the first sync");
      api.apply(virtualService("networking.mesh.io", "later", "details"));
      await waitFor(
        () => store.get("VirtualService", "shop", "later") !== undefined,
        "an object after the failure",
      );
      assert.ok(store.get("VirtualService", "shop", "fine"));
      const [line] = log.matching("error", "orchestrator object left out");
      assert.deepEqual(line.fields, {
        kind: "networking.mesh.io VirtualService",
        event: "add",
        object: "shop/boom",
        error: "RangeError: the store could not copy it",
      });
    }, { log });
  } finally {
    await api.close();
  }
});
