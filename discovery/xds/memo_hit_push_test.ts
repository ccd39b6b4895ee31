import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { parseProxy } from "../model/proxy.ts";
import { GeneratorRegistry, isCacheable, type XdsGenerator } from "../generate/generator.ts";
import { TestAdsClient, testNode, type TestResponse } from "./_test_ads_client.ts";
import {
  endpointsKey,
  sidecarId,
  startTestServer,
  testGenerators,
  type TestPush,
  testPush,
  type TestServer,
  watchingProxy,
} from "./_test_support.ts";

const CDS = TYPE_URL.cluster, EDS = TYPE_URL.endpoint, LDS = TYPE_URL.listener, RDS = TYPE_URL.route;
const WATCHED: Record<string, string[]> = { [CDS]: [], [EDS]: ["a", "b"], [LDS]: [], [RDS]: ["r1", "r2"] };

/** A delta proxy subscribed to every cluster and to the endpoints of `a` and `b`, each first response ACKed. */
async function deltaProxy(server: TestServer, pod: string): Promise<TestAdsClient> {
  const client = TestAdsClient.delta(server.port);
  client.send({ node: testNode(sidecarId(pod)), type_url: CDS, resource_names_subscribe: ["*"] });
  const clusters = await client.next();
  client.send({ type_url: CDS, response_nonce: clusters.nonce });
  client.send({ type_url: EDS, resource_names_subscribe: ["a", "b"] });
  const endpoints = await client.next();
  client.send({ type_url: EDS, response_nonce: endpoints.nonce });
  return client;
}

/** A response as the proxy reads it, but for its nonce (unique per response). */
function withoutNonce(response: TestResponse): unknown {
  return {
    typeUrl: response.typeUrl,
    version: response.version,
    resources: response.resources,
    versions: response.versions,
    removed: response.removed,
    bytes: response.bytes - response.nonce.length,
  };
}

/** The test generators, EDS calling `hook.during` (once set) after it has encoded a resource. */
function hookedGenerators(): { registry: GeneratorRegistry<TestPush>; hook: { during?: () => void } } {
  const hook: { during?: () => void } = {};
  const plain = testGenerators();
  const anyProxy = parseProxy({ id: sidecarId("any"), metadata: {} });
  const registry = new GeneratorRegistry<TestPush>();
  for (const typeUrl of [CDS, EDS, LDS, RDS]) {
    const inner = plain.find(anyProxy, typeUrl)!;
    const hooked: XdsGenerator<TestPush> = typeUrl !== EDS ? inner : {
      ...inner,
      generate: (proxy, push, request) =>
        inner.generate(proxy, push, request).map((resource) =>
          !isCacheable(resource) ? resource : {
            ...resource,
            build: () => {
              const built = resource.build();
              const during = hook.during;
              hook.during = undefined;
              during?.();
              return built;
            },
          }
        ),
    };
    registry.register(hooked);
  }
  return { registry, hook };
}

/** The endpoint addresses of an EDS response's first resource. */
function addresses(response: TestResponse): string[] {
  const fields = response.resources[0].fields as {
    endpoints: { lb_endpoints: { endpoint: { address: { socket_address: { address: string } } } }[] }[];
  };
  return fields.endpoints.flatMap((e) =>
    e.lb_endpoints.map((l) => l.endpoint.address.socket_address.address)
  );
}

Deno.test("A push taken from the shape memo sends the bytes of a built one, in the same order of types", async () => {
  // One push at a time: the first proxy's push builds every type, the second's finds each in the shape memo.
  const server = await startTestServer({ settings: { pushThrottle: 1 } });
  const built = await watchingProxy(server, "built", WATCHED);
  const remembered = await watchingProxy(server, "remembered", WATCHED);
  try {
    server.push(testPush("v2"), { forced: true });
    const buildsBefore = { ...server.counts };
    const responses: TestResponse[][] = [[], []];
    for (const [i, client] of [built, remembered].entries()) {
      for (let n = 0; n < 4; n++) responses[i].push(await client.next());
    }
    assert.deepEqual(responses[0].map((r) => r.typeUrl), [CDS, EDS, LDS, RDS]);
    assert.deepEqual(responses[1].map(withoutNonce), responses[0].map(withoutNonce));
    assert.equal(responses[1][0].version, "v2");
    // Each resource was encoded for the first proxy only (a snapshot with unknown changes empties the cache).
    const encoded = Object.fromEntries(
      Object.entries(server.counts).map((
        [type, n],
      ) => [type, n - buildsBefore[type as keyof typeof buildsBefore]]),
    );
    assert.deepEqual(encoded, { cds: 2, eds: 2, lds: 1, rds: 2 });
  } finally {
    built.close();
    remembered.close();
    await server.close();
  }
});

Deno.test("A delta push taken from the shape memo sends the bytes of a built one, in the same order of types", async () => {
  const server = await startTestServer({ settings: { pushThrottle: 1 } });
  const built = await deltaProxy(server, "built");
  const remembered = await deltaProxy(server, "remembered");
  try {
    server.push(
      testPush("v2", { clusters: { a: 0, b: 7 }, endpoints: { a: ["10.0.0.7"], b: ["10.0.0.2"] } }),
    );
    const responses: TestResponse[][] = [[], []];
    for (const [i, client] of [built, remembered].entries()) {
      for (let n = 0; n < 2; n++) responses[i].push(await client.next());
    }
    assert.deepEqual(responses[0].map((r) => r.typeUrl), [CDS, EDS]);
    assert.deepEqual(responses[0].map((r) => r.resources.map((x) => x.name)), [["b"], ["a"]], "what changed");
    assert.deepEqual(responses[1].map(withoutNonce), responses[0].map(withoutNonce));
  } finally {
    built.close();
    remembered.close();
    await server.close();
  }
});

Deno.test("A proxy served from the shape memo after a build that a push invalidated gets the newer endpoints", async () => {
  const { registry, hook } = hookedGenerators();
  // An endpoint change keeps the snapshot: the endpoints behind it change in place, as the registry's do.
  const endpoints: Record<string, readonly string[]> = { a: ["10.0.0.1"], b: ["10.0.0.2"] };
  const snapshot = testPush("v1", { endpoints });
  const server = await startTestServer({
    generators: registry,
    push: snapshot,
    settings: { pushThrottle: 1 },
  });
  const proxies = [
    await watchingProxy(server, "first", WATCHED),
    await watchingProxy(server, "second", WATCHED),
    await watchingProxy(server, "third", WATCHED),
  ];
  try {
    const change = { full: false, configsUpdated: [endpointsKey("a")] };
    // The newer endpoints arrive once the first proxy's build has read the older ones: what that build makes
    // is sent to that proxy alone, and never handed to a shape-mate from the memo.
    hook.during = () => {
      endpoints.a = ["10.0.0.10"];
      server.push(snapshot, change);
    };
    endpoints.a = ["10.0.0.9"];
    server.push(snapshot, change);
    const firstSeen = [addresses(await proxies[0].next())];
    assert.deepEqual(firstSeen, [["10.0.0.9"]], "the build under way ends with what it read");
    for (const mate of proxies.slice(1)) {
      assert.deepEqual(addresses(await mate.next()), ["10.0.0.10"], "a shape-mate never gets the older list");
    }
    assert.deepEqual(
      addresses(await proxies[0].next()),
      ["10.0.0.10"],
      "the first proxy's queued push follows",
    );
  } finally {
    for (const proxy of proxies) proxy.close();
    await server.close();
  }
});
