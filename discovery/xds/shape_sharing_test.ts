import assert from "node:assert/strict";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { parseProxy, type Proxy } from "../model/proxy.ts";
import type { PushContext } from "../push/push_context.ts";
import { GeneratorRegistry } from "../generate/generator.ts";
import { World } from "../generate/_test_world.ts";
import { envoyResources } from "../generate/envoy/_test_envoy.ts";
import { envoyGenerators } from "../generate/envoy/envoy_generators.ts";
import { buildResources } from "./response_builder.ts";
import { ShapeMemo } from "./shape_memo.ts";
import { XdsCache } from "./xds_cache.ts";

/** The Envoy generators, each counting its `generate` calls by type URL. */
function countingEnvoyGenerators(): { registry: GeneratorRegistry<PushContext>; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const registry = new GeneratorRegistry<PushContext>();
  for (const generator of envoyGenerators()) {
    registry.register({
      ...generator,
      generate: (proxy, push, request) => {
        calls.set(generator.typeUrl, (calls.get(generator.typeUrl) ?? 0) + 1);
        return generator.generate(proxy, push, request);
      },
    });
  }
  return { registry, calls };
}

/** A client sidecar (at no endpoint address) of pod `pod` in `namespace`. */
function client(pod: string, namespace: string, ip: string): Proxy {
  return parseProxy({
    id: `sidecar~${ip}~${pod}.${namespace}~${namespace}.svc.cluster.local`,
    metadata: { NAMESPACE: namespace, LABELS: { app: "client" }, INSTANCE_IPS: ip },
  });
}

Deno.test("A push to N Envoy sidecars of S shapes generates each type S times and hands shape-mates one list", () => {
  const push = new World().apply(...envoyResources()).push();
  const { registry, calls } = countingEnvoyGenerators();
  const deps = {
    generators: registry,
    cache: new XdsCache({ enabled: true, maxEntries: 10_000, stats: false }),
    schema: loadEnvoySchema(),
    shapes: new ShapeMemo(),
  };
  const namespaces = ["example", "other", "third"];
  const proxies = namespaces.flatMap((namespace, n) =>
    Array.from({ length: 4 }, (_, i) => client(`client-${i}`, namespace, `10.0.${9 + n}.${i + 1}`))
  );
  const request = { names: [], full: true };
  // A namespace the snapshot does not single out, with no security policy of its own, is read only by RDS
  // (its services' short names).
  const generations: Record<string, number> = {
    [TYPE_URL.cluster]: 1,
    [TYPE_URL.endpoint]: 1,
    [TYPE_URL.listener]: 1,
    [TYPE_URL.route]: 3,
  };
  for (const [typeUrl, shapes] of Object.entries(generations)) {
    const lists = proxies.map((proxy) => buildResources(deps, proxy, typeUrl, push, request));
    assert.equal(calls.get(typeUrl), shapes, `${typeUrl}: one generation per shape, not per proxy`);
    for (let i = 0; i < proxies.length; i++) {
      const mate = shapes === 1 ? 0 : i - (i % 4);
      assert.equal(lists[i], lists[mate], `${typeUrl}: shape-mates get the very same list`);
    }
  }
});
