import assert from "node:assert/strict";
import type { Resource } from "@mesh/shared/config/resource";
import type { ConfigEvent } from "../model/config_store.ts";
import { MemoryConfigStore } from "./memory_config_store.ts";
import { RecordingLogger } from "./_test_support.ts";

function vs(
  name: string,
  namespace = "default",
  hosts = ["a.example.com"],
  labels?: Record<string, string>,
): Resource {
  return {
    gvk: { group: "networking.mesh.io", version: "v1beta1", kind: "VirtualService" },
    meta: { name, namespace, ...(labels && { labels }) },
    spec: { hosts, http: [{ route: [{ destination: { host: hosts[0] } }] }] },
  };
}

const fixedNow = () => new Date("2021-02-03T04:05:06.000Z");

Deno.test("MemoryConfigStore stores, versions and announces resources", async (t) => {
  const store = new MemoryConfigStore({ now: fixedNow });
  const events: ConfigEvent[] = [];
  const unsubscribe = store.onEvent((e) => events.push(e));

  await t.step("an add gets resourceVersion 1, generation 1 and a creation time", () => {
    const stored = store.apply(vs("reviews"));
    assert.ok(stored);
    assert.equal(stored.meta.resourceVersion, "1");
    assert.equal(stored.meta.generation, 1);
    assert.equal(stored.meta.creationTimestamp, "2021-02-03T04:05:06.000Z");
    assert.deepEqual(events.map((e) => e.type), ["add"]);
    assert.equal(store.get("VirtualService", "default", "reviews"), stored);
  });

  await t.step("re-applying the same content is a no-op without an event", () => {
    assert.equal(store.apply(vs("reviews")), undefined);
    assert.equal(events.length, 1);
  });

  await t.step("an update bumps versions, keeps the creation time and carries the previous version", () => {
    const stored = store.apply(vs("reviews", "default", ["b.example.com"]));
    assert.ok(stored);
    assert.equal(stored.meta.resourceVersion, "2");
    assert.equal(stored.meta.generation, 2);
    assert.equal(stored.meta.creationTimestamp, "2021-02-03T04:05:06.000Z");
    const last = events.at(-1)!;
    assert.equal(last.type, "update");
    assert.deepEqual((last.previous?.spec as { hosts: string[] }).hosts, ["a.example.com"]);
  });

  await t.step("a label change alone is an update", () => {
    const stored = store.apply(vs("reviews", "default", ["b.example.com"], { team: "books" }));
    assert.equal(stored?.meta.resourceVersion, "3");
    assert.equal(events.at(-1)?.type, "update");
  });

  await t.step("stored resources are deep-frozen copies", () => {
    const input = vs("ratings");
    const stored = store.apply(input)!;
    assert.notEqual(stored.spec, input.spec);
    assert.ok(Object.isFrozen(stored) && Object.isFrozen(stored.meta) && Object.isFrozen(stored.spec));
    const hosts = (stored.spec as { hosts: string[] }).hosts;
    assert.throws(() => hosts.push("x"), TypeError);
    (input.spec as { hosts: string[] }).hosts.push("mutated.example.com");
    assert.deepEqual((store.get("VirtualService", "default", "ratings")!.spec as { hosts: string[] }).hosts, [
      "a.example.com",
    ]);
  });

  await t.step("delete removes, announces the last version, and is undefined when absent", () => {
    const removed = store.delete("VirtualService", "default", "ratings");
    assert.equal(removed?.meta.name, "ratings");
    assert.equal(events.at(-1)?.type, "delete");
    assert.equal(events.at(-1)?.resource, removed);
    assert.equal(store.get("VirtualService", "default", "ratings"), undefined);
    assert.equal(store.delete("VirtualService", "default", "ratings"), undefined);
  });

  await t.step("unsubscribed handlers hear nothing more", () => {
    unsubscribe();
    const before = events.length;
    store.apply(vs("details"));
    assert.equal(events.length, before);
  });
});

Deno.test("MemoryConfigStore lists sorted by namespace and name, filtered by kind and namespace", () => {
  const store = new MemoryConfigStore();
  for (const [ns, name] of [["b", "z"], ["a", "y"], ["b", "a"], ["a", "x"]]) store.apply(vs(name, ns));
  store.apply({ ...vs("other"), gvk: { group: "networking.mesh.io", version: "v1beta1", kind: "Gateway" } });
  const names = (rs: readonly Resource[]) => rs.map((r) => `${r.meta.namespace}/${r.meta.name}`);
  assert.deepEqual(names(store.list("VirtualService")), ["a/x", "a/y", "b/a", "b/z"]);
  assert.deepEqual(names(store.list("VirtualService", "b")), ["b/a", "b/z"]);
  assert.deepEqual(names(store.list("Gateway")), ["default/other"]);
  assert.deepEqual(store.list("Sidecar"), []);
  assert.equal(store.size, 5);
  assert.deepEqual(store.all().map((r) => r.gvk.kind), ["Gateway", ...Array(4).fill("VirtualService")]);
});

Deno.test("MemoryConfigStore is synced only once marked", () => {
  const store = new MemoryConfigStore();
  assert.equal(store.synced, false);
  store.markSynced();
  assert.equal(store.synced, true);
});

Deno.test("MemoryConfigStore keeps notifying when one handler throws", () => {
  const logger = new RecordingLogger();
  const store = new MemoryConfigStore({ logger });
  const seen: string[] = [];
  store.onEvent(() => {
    throw new Error("boom");
  });
  store.onEvent((e) => seen.push(e.resource.meta.name));
  store.apply(vs("reviews"));
  assert.deepEqual(seen, ["reviews"]);
  assert.equal(logger.matching("error", "config event handler failed").length, 1);
});

Deno.test("MemoryConfigStore refuses a resource without a name", () => {
  const store = new MemoryConfigStore();
  assert.throws(() => store.apply(vs("")), TypeError);
});

Deno.test("MemoryConfigStore keeps a handed-over resource's parts frozen in place, and copies the rest", () => {
  const store = new MemoryConfigStore({ now: fixedNow });
  const given = vs("reviews");
  const stored = store.apply(given, { handOver: true })!;
  assert.equal(stored.spec, given.spec, "no copy of the spec");
  assert.ok(Object.isFrozen(given.spec) && Object.isFrozen((given.spec as { hosts: string[] }).hosts));
  assert.equal(stored.meta.resourceVersion, "1");

  const copied = vs("ratings");
  const kept = store.apply(copied)!;
  assert.notEqual(kept.spec, copied.spec);
  assert.equal(Object.isFrozen(copied.spec), false, "what the writer keeps is left as it was");
});

Deno.test("MemoryConfigStore is writing while a batch runs, and not after it, failed or not", async () => {
  const store = new MemoryConfigStore();
  const seen: boolean[] = [];
  store.onEvent(() => seen.push(store.writing ?? false));
  assert.equal(store.writing, false);
  await store.batch(async () => {
    store.apply(vs("a"));
    await new Promise((resolve) => setTimeout(resolve, 0));
    store.apply(vs("b"));
  });
  assert.deepEqual(seen, [true, true]);
  assert.equal(store.writing, false);
  await assert.rejects(store.batch(() => Promise.reject(new Error("broken"))), /broken/);
  assert.equal(store.writing, false);
  store.apply(vs("c"));
  assert.deepEqual(seen, [true, true, false]);
});
