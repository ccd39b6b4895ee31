import assert from "node:assert/strict";
import { silentLogger } from "@mesh/shared/log/logger";
import { buildRegistries, UnavailableRegistryError } from "./build_registries.ts";
import { MemoryRegistry } from "./memory_registry.ts";
import { orderedStore } from "./_test_support.ts";

const base = {
  clusterId: "c1",
  appNamespaces: [],
  defaultServiceExportTo: () => ["*"],
  store: orderedStore(),
  log: silentLogger,
};

Deno.test("buildRegistries puts platform registries before the ServiceEntry registry", async (t) => {
  await t.step("--registries Mock gives Mock then ServiceEntry, both on the cluster id", () => {
    const { aggregate, mock, serviceEntries } = buildRegistries({ ...base, registries: ["Mock"] });
    assert.deepEqual(aggregate.registries().map((r) => `${r.provider}/${r.clusterId}`), [
      "Mock/c1",
      "External/c1",
    ]);
    assert.equal(aggregate.registries()[1], serviceEntries);
    assert.equal(mock?.hasSynced(), true);
  });

  await t.step("Orchestrator needs a factory and says so", () => {
    assert.throws(
      () => buildRegistries({ ...base, registries: ["Orchestrator"] }),
      (e: unknown) =>
        e instanceof UnavailableRegistryError && /Registry "Orchestrator" in --registries/.test(e.message),
    );
  });

  await t.step("a factory plugs a platform registry in", () => {
    const { aggregate } = buildRegistries({
      ...base,
      registries: ["Orchestrator", "Mock"],
      factories: { Orchestrator: (clusterId) => new MemoryRegistry({ provider: "Orchestrator", clusterId }) },
    });
    assert.deepEqual(aggregate.registries().map((r) => r.provider), ["Orchestrator", "Mock", "External"]);
  });
});
