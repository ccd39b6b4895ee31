import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { KINDS } from "@mesh/shared/config/kinds";
import { silentLogger } from "@mesh/shared/log/logger";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { type ApiObject, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { waitFor } from "../config/_test_support.ts";
import { MemoryConfigStore } from "../config/memory_config_store.ts";
import { loadOrchConfig, RateLimiter } from "./orch_client.ts";
import { OrchConfigSource } from "./orch_config_source.ts";

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
