import assert from "node:assert/strict";
import { silentLogger } from "../../shared/log/logger.ts";
import { type ApiObject, OrchApiServer } from "../../shared/testing/orch_api_server.ts";
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
