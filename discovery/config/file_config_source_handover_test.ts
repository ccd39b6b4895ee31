import assert from "node:assert/strict";
import type { Resource } from "@mesh/shared/config/resource";
import type { ApplyOptions } from "../model/config_store.ts";
import { MemoryConfigStore } from "./memory_config_store.ts";
import { replaceFile, startTestSource, virtualService, waitFor } from "./_test_support.ts";

/** A store that records, per write, whether the resource was handed over and was frozen through by then. */
class RecordingStore extends MemoryConfigStore {
  readonly writes: { name: string; handOver: boolean; frozenThrough: boolean }[] = [];

  override apply(resource: Resource, options: ApplyOptions = {}): Resource | undefined {
    this.writes.push({
      name: resource.meta.name,
      handOver: options.handOver === true,
      frozenThrough: frozenThrough(resource),
    });
    return super.apply(resource, options);
  }
}

function frozenThrough(value: unknown): boolean {
  if (value === null || typeof value !== "object") return true;
  return Object.isFrozen(value) && Object.values(value).every(frozenThrough);
}

Deno.test("The directory source hands its resources to the store frozen through, for the store not to copy them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_handover_test_" });
  const store = new RecordingStore();
  await Deno.writeTextFile(`${dir}/a.yaml`, virtualService("first", "a.shop.svc.cluster.local"));
  const { source } = await startTestSource(dir, "VirtualService", { store });
  try {
    await replaceFile(`${dir}/b.yaml`, virtualService("second", "b.shop.svc.cluster.local"));
    await waitFor(() => store.get("VirtualService", "shop", "second") !== undefined, "the second resource");
    assert.deepEqual(store.writes, [
      { name: "first", handOver: true, frozenThrough: true },
      { name: "second", handOver: true, frozenThrough: true },
    ]);
    const stored = store.get("VirtualService", "shop", "second")!;
    assert.deepEqual(stored.spec, {
      hosts: ["b.shop.svc.cluster.local"],
      http: [{ route: [{ destination: { host: "b.shop.svc.cluster.local" } }] }],
    });
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
