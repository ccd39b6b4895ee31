import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { parseProxy } from "../model/proxy.ts";
import { GeneratorRegistry, type XdsGenerator } from "../generate/generator.ts";
import { configKey } from "../push/push_request.ts";
import { startTestServer, testGenerators, type TestPush, testPush } from "./_test_support.ts";
import { TestAdsClient, testNode } from "./_test_ads_client.ts";
import { ResponseBuilds } from "./response_builds.ts";
import { ResponseGate } from "./response_gate.ts";
import { ShapeMemo } from "./shape_memo.ts";
import { XdsCache } from "./xds_cache.ts";

const CDS = TYPE_URL.cluster;
const MESH_SIZE = 200;

/** A snapshot of `size` clusters. */
function mesh(version: string, size = MESH_SIZE): TestPush {
  return testPush(version, {
    clusters: Object.fromEntries(Array.from({ length: size }, (_, i) => [`c${i}`, 0])),
  });
}

/** The test generators; CDS counts its `generate` calls and the clusters it built, and calls `onBuild`. */
function countingGenerators(onBuild: (built: number) => void) {
  const counts = { cds: 0, eds: 0, lds: 0, rds: 0 };
  const stats = { built: 0, generations: 0 };
  const registry = new GeneratorRegistry<TestPush>();
  const base = testGenerators(counts);
  const proxy = parseProxy({ id: "sidecar~10.1.0.1~x.test~test.svc.cluster.local" });
  for (const typeUrl of [CDS, TYPE_URL.endpoint, TYPE_URL.listener, TYPE_URL.route]) {
    const generator = base.find(proxy, typeUrl)!;
    if (typeUrl !== CDS) {
      registry.register(generator);
      continue;
    }
    const counting: XdsGenerator<TestPush> = {
      ...generator,
      generate: (p, push, request) => {
        stats.generations++;
        return generator.generate(p, push, request).map((resource) =>
          "key" in resource
            ? {
              ...resource,
              build: () => {
                onBuild(++stats.built);
                return resource.build();
              },
            }
            : resource
        );
      },
    };
    registry.register(counting);
  }
  return { registry, stats };
}

Deno.test("A whole-mesh response is built over several turns of the event loop, and I/O runs between them", async () => {
  let clock = 0;
  // Every reading of the server's clock stands for a millisecond of building: slices end every few resources.
  const now = () => clock++;
  let builtWhenProbed: number | undefined;
  const { registry, stats } = countingGenerators((built) => {
    // A callback the event loop runs as soon as it gets a turn: a `/ready` probe, a healthy proxy's ACK.
    if (built === 1) setTimeout(() => builtWhenProbed = stats.built, 0);
  });
  const server = await startTestServer({ push: mesh("v1"), now, generators: registry });
  const client = TestAdsClient.sotw(server.port);
  try {
    client.send({ node: testNode("sidecar~10.1.0.1~app.test~test.svc.cluster.local"), type_url: CDS });
    const response = await client.next();
    assert.equal(response.resources.length, MESH_SIZE, "the whole mesh is sent, in one response");
    assert.equal(stats.built, MESH_SIZE);
    // Not run yet counts as run last: the whole response went out before the loop got a turn.
    const probed = builtWhenProbed ?? MESH_SIZE;
    assert.ok(
      probed < MESH_SIZE / 2,
      `the probe ran after ${probed} of ${MESH_SIZE} clusters were built: it waited for the response`,
    );
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Proxies of one shape that ask at once share the build under way", async () => {
  const { registry, stats } = countingGenerators(() => {});
  const server = await startTestServer({ push: mesh("v1"), generators: registry });
  const clients = Array.from({ length: 4 }, () => TestAdsClient.sotw(server.port));
  try {
    clients.forEach((client, i) =>
      client.send({
        node: testNode(`sidecar~10.1.0.${i + 1}~app-${i}.test~test.svc.cluster.local`),
        type_url: CDS,
      })
    );
    const responses = await Promise.all(clients.map((client) => client.next()));
    for (const response of responses) assert.equal(response.resources.length, MESH_SIZE);
    assert.equal(stats.generations, 1, "one generation for the shape");
    assert.equal(stats.built, MESH_SIZE, "each cluster encoded once");
  } finally {
    for (const client of clients) client.close();
    await server.close();
  }
});

Deno.test("A build that a push invalidated while it paused keeps what it built out of the cache and the memo", async () => {
  const turns: (() => void)[] = [];
  let clock = 0;
  const gate = new ResponseGate(1, { yieldTo: (next) => turns.push(next), now: () => clock++, sliceMs: 4 });
  const builds = new ResponseBuilds(gate);
  const { registry } = countingGenerators(() => {});
  const deps = {
    generators: registry,
    cache: new XdsCache({ enabled: true, maxEntries: 0, stats: false }),
    schema: loadEnvoySchema(),
    shapes: new ShapeMemo(),
  };
  const proxy = parseProxy({ id: "sidecar~10.1.0.1~app.test~test.svc.cluster.local" });
  const push = mesh("v1", 20);
  const building = builds.build(deps, proxy, CDS, push, { names: [], full: true });
  turns.shift()!();
  const before = deps.cache.size;
  assert.ok(before > 0 && before < 20, `${before} of 20 clusters built in the first turn`);
  // What a push does: the memo cleared, the changed keys' entries dropped.
  deps.shapes.clear();
  deps.cache.invalidate([configKey("Cluster", "test", "c19")]);
  while (turns.length > 0) turns.shift()!();
  const list = await building;
  assert.equal(list?.length, 20, "the response itself is whole");
  assert.equal(deps.cache.size, before, "nothing built after the invalidation was cached");
  assert.equal(
    deps.shapes.get(deps.shapes.prefix("default", CDS, "", { names: [], full: true }), [], push),
    undefined,
  );
});
