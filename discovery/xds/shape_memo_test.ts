import assert from "node:assert/strict";
import { loadEnvoySchema } from "../../proto/envoy_schema.ts";
import { TYPE_URL } from "../../proto/type_urls.ts";
import { parseProxy } from "../model/proxy.ts";
import { cacheKey, GeneratorRegistry, type XdsGenerator } from "../generate/generator.ts";
import { buildResources } from "./response_builder.ts";
import { ShapeMemo } from "./shape_memo.ts";
import { XdsCache } from "./xds_cache.ts";

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
