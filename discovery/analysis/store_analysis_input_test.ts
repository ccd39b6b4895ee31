import assert from "node:assert/strict";
import { MemoryConfigStore } from "../config/memory_config_store.ts";
import type { OrchestratorObjects, OrchKind, OrchObject } from "./analysis_input.ts";
import { storeAnalysisInput } from "./store_analysis_input.ts";

Deno.test("A run's input lists the orchestrator's objects once, when it starts, and keeps that state", () => {
  const pods: OrchObject[] = [{ kind: "Pod", metadata: { name: "a", namespace: "shop" } }];
  const asked: OrchKind[] = [];
  const live: OrchestratorObjects = {
    list(kind) {
      asked.push(kind);
      return kind === "Pod" ? [...pods] : [];
    },
  };
  const input = storeAnalysisInput({
    store: new MemoryConfigStore(),
    rootNamespace: () => "mesh-system",
    systemNamespace: "mesh-system",
    meshNetworks: () => ({}),
    orchestrator: live,
  });
  pods.push({ kind: "Pod", metadata: { name: "b", namespace: "shop" } });
  assert.deepEqual(input.orchestrator?.list("Pod").map((p) => p.metadata.name), ["a"]);
  input.orchestrator?.list("Pod");
  assert.equal(asked.filter((k) => k === "Pod").length, 1, "each kind is listed once per run");
});
