import assert from "node:assert/strict";
import { OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { WorkloadEntryConflictError } from "../model/workload_entry_writer.ts";
import { loadOrchConfig } from "./orch_client.ts";
import { RateLimiter } from "./rate_limiter.ts";
import { orchWorkloadEntryWriter } from "./orch_workload_entries.ts";

Deno.test("WorkloadEntries are written through the API naming the version read; a stale write is a conflict", async () => {
  const server = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_wle_" });
  try {
    await Deno.writeTextFile(`${dir}/kubeconfig`, server.kubeconfig());
    const writer = orchWorkloadEntryWriter(
      loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }),
      new RateLimiter(1000, 100),
    );
    const entry = {
      gvk: { group: "networking.mesh.io", version: "v1alpha3", kind: "WorkloadEntry" },
      meta: { name: "reviews-10.0.0.1", namespace: "vm", annotations: { "mesh.io/connectedAt": "t1" } },
      spec: { address: "10.0.0.1", labels: { app: "reviews" } },
    };
    assert.equal(await writer.get("vm", "reviews-10.0.0.1"), undefined);
    await writer.create(entry);
    await assert.rejects(writer.create(entry), WorkloadEntryConflictError);
    const first = (await writer.get("vm", "reviews-10.0.0.1"))!;
    assert.deepEqual(first.entry.spec, entry.spec);
    assert.equal(first.entry.meta.annotations?.["mesh.io/connectedAt"], "t1");
    const marked = { ...entry, meta: { ...entry.meta, annotations: { "mesh.io/disconnectedAt": "t2" } } };
    await writer.update(marked, first.resourceVersion);
    await assert.rejects(writer.update(entry, first.resourceVersion), WorkloadEntryConflictError);
    await assert.rejects(
      writer.delete("vm", "reviews-10.0.0.1", first.resourceVersion),
      WorkloadEntryConflictError,
    );
    const second = (await writer.get("vm", "reviews-10.0.0.1"))!;
    assert.deepEqual(second.entry.meta.annotations, { "mesh.io/disconnectedAt": "t2" });
    await writer.delete("vm", "reviews-10.0.0.1", second.resourceVersion);
    assert.equal(await writer.get("vm", "reviews-10.0.0.1"), undefined);
    await writer.delete("vm", "reviews-10.0.0.1", second.resourceVersion);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
