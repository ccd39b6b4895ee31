import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { parseProxy } from "../model/proxy.ts";
import { configKey } from "../push/push_request.ts";
import { GeneratorRegistry, type XdsGenerator } from "../generate/generator.ts";
import { TestAdsClient, testNode } from "./_test_ads_client.ts";
import {
  endpointsKey,
  sidecarId,
  startTestServer,
  testGenerators,
  type TestPush,
  testPush,
  type TestServer,
  waitFor,
  watchingProxy,
} from "./_test_support.ts";

const CDS = TYPE_URL.cluster, EDS = TYPE_URL.endpoint, LDS = TYPE_URL.listener, RDS = TYPE_URL.route;
const WATCHED: Record<string, string[]> = { [CDS]: [], [EDS]: ["a", "b"], [LDS]: [], [RDS]: ["r1"] };

/**
 * The test generators, each declaring the kinds it does not read (of the test generators' `Cluster`,
 * `Endpoints`, `Listener` and `Route` keys, and a `Gateway` none reads), and counting its `generate` calls.
 */
function declaringGenerators(): { registry: GeneratorRegistry<TestPush>; calls: Record<string, number> } {
  const unaffected: Record<string, readonly string[]> = {
    [CDS]: ["Route", "Listener", "Gateway"],
    [EDS]: ["Route", "Listener", "Cluster", "Gateway"],
    [LDS]: ["Route", "Cluster", "Gateway"],
    [RDS]: ["Cluster", "Listener", "Gateway"],
  };
  const calls: Record<string, number> = { [CDS]: 0, [EDS]: 0, [LDS]: 0, [RDS]: 0 };
  const plain = testGenerators();
  const anyProxy = parseProxy({ id: sidecarId("any"), metadata: {} });
  const registry = new GeneratorRegistry<TestPush>();
  for (const typeUrl of [CDS, EDS, LDS, RDS]) {
    const inner = plain.find(anyProxy, typeUrl)!;
    const kinds = new Set(unaffected[typeUrl]);
    const spy: XdsGenerator<TestPush> = {
      ...inner,
      unaffectedBy: () => kinds,
      generate: (proxy, push, request) => {
        calls[typeUrl]++;
        return inner.generate(proxy, push, request);
      },
    };
    registry.register(spy);
  }
  return { registry, calls };
}

/** The next `count` responses' types, each ACKed; then a probe proves nothing else was sent. */
async function nextTypes(client: TestAdsClient, count: number, version: string): Promise<string[]> {
  const types: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await client.next();
    assert.equal(response.version, version);
    client.ack(response, WATCHED[response.typeUrl]);
    types.push(response.typeUrl);
  }
  // A new watch of a type not pushed is answered at once: were anything else sent, it would come first.
  client.send({ type_url: LDS, version_info: "", response_nonce: "", resource_names: [] });
  assert.equal((await client.next()).typeUrl, LDS, "nothing else was sent before the probe's answer");
  return types;
}

const idle = (server: TestServer) => {
  const { pending, inFlight } = server.service.queueStats();
  return pending === 0 && inFlight === 0;
};

Deno.test("A full push builds only the types its changed kinds may affect; the others' responses stand for it", async () => {
  const { registry, calls } = declaringGenerators();
  const server = await startTestServer({ generators: registry });
  const clients = [await watchingProxy(server, "one", WATCHED), await watchingProxy(server, "two", WATCHED)];
  try {
    const before = { ...calls };
    server.push(testPush("v2", { routes: { r1: "moved.example.com", r2: "r2.example.com" } }), {
      configsUpdated: [configKey("Route", "test", "r1")],
    });
    for (const client of clients) assert.deepEqual(await nextTypes(client, 1, "v2"), [RDS]);
    assert.equal(calls[CDS] - before[CDS], 0, "CDS is not built to be compared");
    assert.equal(calls[EDS] - before[EDS], 0, "nor EDS");
    assert.ok(calls[RDS] > before[RDS], "RDS is built");
    for (const connection of server.service.connections()) {
      const sync = connection.syncStatus();
      assert.equal(sync[CDS].unchangedThrough, "v2", "what CDS was sent stands for v2");
      assert.equal(sync[EDS].unchangedThrough, "v2");
    }
  } finally {
    for (const client of clients) client.close();
    await server.close();
  }
});

Deno.test("EDS follows a CDS the changed kinds affect though they do not affect EDS, and RDS an LDS", async () => {
  const { registry, calls } = declaringGenerators();
  const server = await startTestServer({ generators: registry });
  const client = await watchingProxy(server, "one", WATCHED);
  try {
    server.push(testPush("v2", { clusters: { a: 3, b: 0 } }), {
      configsUpdated: [configKey("Cluster", "test", "a")],
    });
    assert.deepEqual(await nextTypes(client, 2, "v2"), [CDS, EDS]);
    const before = { ...calls };
    server.push(testPush("v3", { clusters: { a: 3, b: 0 }, listeners: ["l1", "l2"] }), {
      configsUpdated: [configKey("Listener", "test", "l2")],
    });
    assert.deepEqual(await nextTypes(client, 2, "v3"), [LDS, RDS]);
    assert.equal(calls[CDS] - before[CDS], 0, "CDS is not built for a listener change");
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("A type the proxy rejected is built and resent by the next push whatever kinds changed", async () => {
  const { registry } = declaringGenerators();
  const server = await startTestServer({ generators: registry });
  const client = TestAdsClient.sotw(server.port);
  try {
    client.send({ node: testNode(sidecarId("one")), type_url: CDS });
    const first = await client.next();
    client.send({
      type_url: CDS,
      version_info: "",
      response_nonce: first.nonce,
      error_detail: { code: 3, message: "cluster a: bad connect_timeout" },
    });
    client.send({ type_url: RDS, resource_names: WATCHED[RDS] });
    client.ack(await client.next(), WATCHED[RDS]);
    server.push(testPush("v2", { routes: { r1: "moved.example.com", r2: "r2.example.com" } }), {
      configsUpdated: [configKey("Route", "test", "r1")],
    });
    assert.deepEqual(await nextTypes(client, 2, "v2"), [CDS, RDS]);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("A push whose changed kinds none of a proxy's types read queues nothing for it", async () => {
  const { registry, calls } = declaringGenerators();
  const server = await startTestServer({ generators: registry });
  const clients = [await watchingProxy(server, "one", WATCHED), await watchingProxy(server, "two", WATCHED)];
  try {
    await waitFor(() => idle(server), "the first answers to finish");
    const before = JSON.stringify(calls);
    server.push(testPush("v2"), { configsUpdated: [configKey("Gateway", "test", "g")] });
    assert.deepEqual(server.service.queueStats(), { pending: 0, inFlight: 0 }, "no push is queued");
    assert.equal(JSON.stringify(calls), before, "nothing is built");
    for (const connection of server.service.connections()) {
      for (const typeUrl of [CDS, EDS, LDS, RDS]) {
        assert.equal(connection.syncStatus()[typeUrl].unchangedThrough, "v2", "every response stands for v2");
      }
    }
    for (const client of clients) assert.deepEqual(await nextTypes(client, 0, "v2"), []);
  } finally {
    for (const client of clients) client.close();
    await server.close();
  }
});

Deno.test("An endpoint-only push sends EDS alone, and nothing to a proxy that watches no EDS", async () => {
  const { registry, calls } = declaringGenerators();
  const server = await startTestServer({ generators: registry });
  const watching = await watchingProxy(server, "one", WATCHED);
  const clustersOnly = TestAdsClient.sotw(server.port);
  try {
    clustersOnly.send({ node: testNode(sidecarId("two")), type_url: CDS });
    const first = await clustersOnly.next();
    clustersOnly.send({ type_url: CDS, version_info: first.version, response_nonce: first.nonce });
    const before = { ...calls };
    server.push(testPush("v1", { endpoints: { a: ["10.0.0.9"], b: ["10.0.0.2"] } }), {
      full: false,
      configsUpdated: [endpointsKey("a")],
    });
    const pushed = await watching.next();
    assert.equal(pushed.typeUrl, EDS);
    watching.ack(pushed, WATCHED[pushed.typeUrl]);
    await waitFor(() => idle(server), "the endpoint push to finish");
    assert.equal(calls[EDS] - before[EDS], 1, "EDS is built for the proxy watching it");
    for (const typeUrl of [CDS, LDS, RDS]) {
      assert.equal(calls[typeUrl], before[typeUrl], `${typeUrl} is not built`);
    }
    assert.deepEqual(
      await nextTypes(watching, 0, "v1"),
      [],
      "nothing but EDS was sent to the proxy watching it",
    );
    // The probe of the proxy watching only CDS: a new LDS watch is its next answer, so nothing came before it.
    clustersOnly.send({ type_url: LDS, resource_names: [] });
    assert.equal((await clustersOnly.next()).typeUrl, LDS, "no EDS was sent to the proxy watching no EDS");
  } finally {
    watching.close();
    clustersOnly.close();
    await server.close();
  }
});
