import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { metricValue } from "./_test_support.ts";
import { XdsCache } from "./xds_cache.ts";
import { VersionedResource } from "./versioned_resource.ts";

const TYPE = "type.googleapis.com/envoy.config.cluster.v3.Cluster";

function entry(name: string): VersionedResource {
  return new VersionedResource(name, new TextEncoder().encode(name));
}

function cacheWith(
  entries: Record<string, readonly string[]>,
  options: Partial<ConstructorParameters<typeof XdsCache>[0]> = {},
): XdsCache {
  const cache = new XdsCache({ enabled: true, maxEntries: 0, stats: false, ...options });
  for (const [id, dependsOn] of Object.entries(entries)) cache.add({ id, dependsOn }, TYPE, entry(id));
  return cache;
}

const present = (cache: XdsCache) => cache.entries().map((e) => e.key).sort();

Deno.test("XdsCache invalidates exactly the entries that depend on a changed key", async (t) => {
  const cache = cacheWith({
    onlyA: ["VirtualService/ns/a"],
    aAndB: ["VirtualService/ns/a", "DestinationRule/ns/b"],
    onlyC: ["Service/ns/c.ns.svc.cluster.local"],
    nothing: [],
  });
  await t.step("a key nobody depends on drops nothing", () => {
    assert.equal(cache.invalidate(["VirtualService/other/a"]), 0);
    assert.deepEqual(present(cache), ["aAndB", "nothing", "onlyA", "onlyC"]);
  });
  await t.step("a key shared by two entries drops both and nothing else", () => {
    assert.equal(cache.invalidate(["VirtualService/ns/a"]), 2);
    assert.deepEqual(present(cache), ["nothing", "onlyC"]);
  });
  await t.step("a service key drops its dependents", () => {
    assert.equal(cache.invalidate(["Service/ns/c.ns.svc.cluster.local"]), 1);
    assert.deepEqual(present(cache), ["nothing"]);
  });
  await t.step("clear drops everything", () => {
    assert.equal(cache.clear(), 1);
    assert.equal(cache.size, 0);
  });
});

Deno.test("XdsCache replaces an entry's dependencies when the key is added again", () => {
  const cache = cacheWith({ x: ["old"] });
  cache.add({ id: "x", dependsOn: ["new"] }, TYPE, entry("x"));
  assert.equal(cache.invalidate(["old"]), 0);
  assert.equal(cache.invalidate(["new"]), 1);
});

Deno.test("XdsCache evicts the least recently used entry beyond DISCOVERY_XDS_CACHE_SIZE", async () => {
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  const cache = cacheWith({ first: ["d1"], second: ["d2"] }, { maxEntries: 2, metrics });
  assert.ok(cache.get("first"), "reading first makes second the least recently used");
  cache.add({ id: "third", dependsOn: ["d3"] }, TYPE, entry("third"));
  assert.deepEqual(present(cache), ["first", "third"]);
  assert.equal(cache.invalidate(["d2"]), 0, "an evicted entry leaves no trace in the dependency index");
  assert.equal(await metricValue(metrics, "xds_cache_evictions"), 1);
  assert.equal(await metricValue(metrics, "xds_cache_size"), 2);
  assert.equal(cache.stats().evictions, 1);
});

Deno.test("XdsCache is unbounded when DISCOVERY_XDS_CACHE_SIZE is 0 or less", () => {
  for (const maxEntries of [0, -1]) {
    const cache = cacheWith({}, { maxEntries });
    for (let i = 0; i < 1000; i++) cache.add({ id: `k${i}`, dependsOn: [] }, TYPE, entry(`k${i}`));
    assert.equal(cache.size, 1000);
  }
});

Deno.test("XdsCache stores and returns nothing when DISCOVERY_ENABLE_XDS_CACHE is off", () => {
  const cache = cacheWith({ x: [] }, { enabled: false });
  assert.equal(cache.size, 0);
  assert.equal(cache.get("x"), undefined);
  assert.equal(cache.stats().misses, 0, "a disabled cache is not read at all");
});

Deno.test("XdsCache counts hits and misses in xds_cache_reads only with DISCOVERY_XDS_CACHE_STATS", async (t) => {
  for (const stats of [true, false]) {
    await t.step(`stats ${stats}`, async () => {
      const metrics = new Metrics("discovery", { version: "t", tag: "t" });
      const cache = cacheWith({ x: [] }, { stats, metrics });
      cache.get("x");
      cache.get("x");
      cache.get("y");
      assert.equal(await metricValue(metrics, "xds_cache_reads", { type: "hit" }), stats ? 2 : 0);
      assert.equal(await metricValue(metrics, "xds_cache_reads", { type: "miss" }), stats ? 1 : 0);
      assert.deepEqual([cache.stats().hits, cache.stats().misses], [2, 1]);
    });
  }
});

Deno.test("VersionedResource versions are equal exactly when the bytes are", () => {
  const a = new VersionedResource("a", Uint8Array.of(1, 2, 3));
  assert.equal(a.version, new VersionedResource("b", Uint8Array.of(1, 2, 3)).version);
  assert.notEqual(a.version, new VersionedResource("a", Uint8Array.of(1, 2, 4)).version);
  assert.match(a.version, /^[A-Za-z0-9_-]{16}$/);
});

Deno.test("XdsCache releases entries no connected stream holds or read for two sweeps, and keeps held ones", () => {
  const cache = cacheWith({ held: [], left: [], reread: [] });
  const resourceOf = (id: string) => cache.get(id)!;
  const held = new Set([resourceOf("held")]);
  assert.equal(cache.sweep(held), 0, "everything was used since the last sweep");
  assert.equal(cache.sweep(held), 0, "one quiet period is within the grace");
  resourceOf("reread");
  assert.equal(cache.sweep(held), 1, "the second quiet period ends it");
  assert.deepEqual(present(cache), ["held", "reread"]);
  assert.equal(cache.sweep(held), 0);
  assert.equal(cache.sweep(held), 1, "a read keeps an entry for the grace only");
  assert.deepEqual(present(cache), ["held"]);
  assert.equal(cache.stats().released, 2);
  for (let i = 0; i < 5; i++) assert.equal(cache.sweep(held), 0, "a held entry is never released");
  assert.equal(cache.sweep(new Set()), 0);
  assert.equal(cache.sweep(new Set()), 1, "once its holder leaves, it goes after the grace");
  assert.equal(cache.size, 0);
});
