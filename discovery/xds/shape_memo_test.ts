import assert from "node:assert/strict";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { parseProxy } from "../model/proxy.ts";
import { cacheKey, GeneratorRegistry, type XdsGenerator } from "../generate/generator.ts";
import { buildResources } from "./response_builder.ts";
import { ShapeMemo } from "./shape_memo.ts";
import { XdsCache } from "./xds_cache.ts";
import { VersionedResource } from "./versioned_resource.ts";

const schema = loadEnvoySchema();

function proxy(pod: string, namespace: string) {
  return parseProxy({ id: `sidecar~10.0.0.1~${pod}.${namespace}~${namespace}.svc.cluster.local` });
}

/** A listener generator whose output depends only on the proxy's namespace. */
function namespacedListeners(calls: { n: number }): XdsGenerator {
  return {
    typeUrl: TYPE_URL.listener,
    shapeOf: (p) => p.namespace,
    generate(p) {
      calls.n++;
      const name = `ns-${p.namespace}`;
      return [{
        name,
        key: cacheKey(TYPE_URL.listener, [name], []),
        build: () => ({ name, address: { socket_address: { address: "0.0.0.0", port_value: 80 } } }),
      }];
    },
  };
}

Deno.test("buildResources generates once per proxy shape and push, and shares the list", async (t) => {
  const calls = { n: 0 };
  const deps = {
    generators: new GeneratorRegistry().register(namespacedListeners(calls)),
    cache: new XdsCache({ enabled: true, maxEntries: 0, stats: false }),
    schema,
    shapes: new ShapeMemo(),
  };
  const v1 = { version: "v1" };
  const request = { names: [], full: true };
  await t.step("three proxies of one namespace cost one generation", () => {
    const lists = ["a", "b", "c"].map((pod) =>
      buildResources(deps, proxy(pod, "one"), TYPE_URL.listener, v1, request)
    );
    assert.equal(calls.n, 1);
    assert.equal(lists[0], lists[2], "the very same list is shared");
  });
  await t.step("another namespace is another shape", () => {
    const list = buildResources(deps, proxy("d", "two"), TYPE_URL.listener, v1, request);
    assert.equal(calls.n, 2);
    assert.deepEqual(list?.map((r) => r.name), ["ns-two"]);
  });
  await t.step("a new snapshot, other names or a clear generate again", () => {
    buildResources(deps, proxy("a", "one"), TYPE_URL.listener, { version: "v2" }, request);
    assert.equal(calls.n, 3);
    buildResources(deps, proxy("a", "one"), TYPE_URL.listener, v1, { names: ["ns-one"], full: true });
    assert.equal(calls.n, 4);
    deps.shapes.clear();
    buildResources(deps, proxy("a", "one"), TYPE_URL.listener, v1, request);
    assert.equal(calls.n, 5);
  });
});

Deno.test("buildResources shares nothing between proxies when DISCOVERY_ENABLE_XDS_CACHE is off", () => {
  const calls = { n: 0 };
  const deps = {
    generators: new GeneratorRegistry().register(namespacedListeners(calls)),
    cache: new XdsCache({ enabled: false, maxEntries: 0, stats: false }),
    schema,
    shapes: new ShapeMemo(),
  };
  for (const pod of ["a", "b"]) {
    buildResources(deps, proxy(pod, "one"), TYPE_URL.listener, { version: "v1" }, { names: [], full: true });
  }
  assert.equal(calls.n, 2);
  assert.equal(deps.shapes.size, 0);
});

/** A listener per requested name, the same for every proxy; records the names each call generated. */
function listenersByName(calls: string[][]): XdsGenerator {
  return {
    typeUrl: TYPE_URL.listener,
    shapeOf: () => "everyone",
    resourcePerName: true,
    generate(_p, _push, request) {
      calls.push([...request.names]);
      return request.names.filter((name) => !name.startsWith("unknown")).map((name) => ({
        name,
        key: cacheKey(TYPE_URL.listener, [name], []),
        build: () => ({ name, address: { socket_address: { address: "0.0.0.0", port_value: 80 } } }),
      }));
    },
  };
}

Deno.test("buildResources shares each name's resource between proxies of a shape that watch different names", async (t) => {
  const calls: string[][] = [];
  const deps = {
    generators: new GeneratorRegistry().register(listenersByName(calls)),
    cache: new XdsCache({ enabled: true, maxEntries: 0, stats: false }),
    schema,
    shapes: new ShapeMemo(),
  };
  const v1 = { version: "v1" };
  const build = (pod: string, names: string[], push = v1) =>
    buildResources(deps, proxy(pod, "one"), TYPE_URL.listener, push, { names, full: true })!.map((r) =>
      r.name
    );

  await t.step("only names no proxy of the shape asked for are generated", () => {
    assert.deepEqual(build("a", ["l1", "l2", "unknown1"]), ["l1", "l2"]);
    assert.deepEqual(build("b", ["l2", "l3", "unknown1"]), ["l2", "l3"]);
    assert.deepEqual(build("c", ["l3", "l1", "l3"]), ["l3", "l1"], "in the order asked, each once");
    assert.deepEqual(calls, [["l1", "l2", "unknown1"], ["l3"]], "a name that gave nothing is remembered too");
  });
  await t.step("the same resource object is shared", () => {
    const a = buildResources(deps, proxy("d", "one"), TYPE_URL.listener, v1, { names: ["l1"], full: true })!;
    const b = buildResources(deps, proxy("e", "one"), TYPE_URL.listener, v1, {
      names: ["l1", "l2"],
      full: true,
    })!;
    assert.equal(a[0], b[0]);
  });
  await t.step("a new snapshot generates again", () => {
    calls.length = 0;
    build("a", ["l1"], { version: "v2" });
    assert.deepEqual(calls, [["l1"]]);
  });
});

Deno.test("ShapeMemo holds at most its bound in bytes, whatever names proxies watch between pushes", () => {
  const memo = new ShapeMemo(50_000);
  const push = { version: "v1" };
  for (let i = 0; i < 1_000; i++) {
    const names = Object.freeze([`junk-${i}-${"x".repeat(100)}`, `more-${i}`]);
    memo.set("prefix", names, push, []);
    memo.setByName("prefix", push, names[0], null);
    assert.ok(memo.stats().bytes <= 50_000, `held ${memo.stats().bytes} bytes after ${i + 1} lists`);
  }
  assert.ok(memo.stats().entries > 0, "it still remembers the latest");
  const huge = Object.freeze(["h".repeat(60_000)]);
  memo.set("prefix", huge, push, []);
  assert.equal(memo.get("prefix", huge, push), undefined, "a list bigger than the bound is not kept");
  memo.clear();
  assert.deepEqual(memo.stats(), { entries: 0, bytes: 0, maxBytes: 50_000 });
  assert.throws(() => new ShapeMemo(0), RangeError);
});

Deno.test("ShapeMemo drops the prefixes nobody read or wrote for two sweeps, and their bytes", () => {
  const memo = new ShapeMemo();
  const push = {};
  const names = ["a"];
  const resources = [new VersionedResource("a", new Uint8Array(1))];
  memo.set("gone", names, push, resources);
  memo.set("used", names, push, resources);
  assert.equal(memo.sweep(), 0);
  assert.equal(memo.sweep(), 0, "one quiet period is within the grace");
  assert.equal(memo.get("used", names, push), resources);
  const before = memo.stats().bytes;
  assert.equal(memo.sweep(), 1, "the second quiet period ends the unused prefix");
  assert.equal(memo.get("gone", names, push), undefined);
  assert.equal(memo.get("used", names, push), resources);
  assert.ok(memo.stats().bytes < before, "its bytes are no longer counted");
  assert.equal(memo.sweep(), 0);
  assert.equal(memo.sweep(), 0);
  assert.equal(memo.sweep(), 1);
  assert.deepEqual(memo.stats(), { entries: 0, bytes: 0, maxBytes: 64 * 1024 * 1024 });
});
