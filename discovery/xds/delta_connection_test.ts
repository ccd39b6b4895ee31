import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { TestAdsClient, testNode, type TestResponse } from "./_test_ads_client.ts";
import { endpointsKey, metricValue, sidecarId, startTestServer, testPush, waitFor } from "./_test_support.ts";

const CDS = TYPE_URL.cluster, EDS = TYPE_URL.endpoint, LDS = TYPE_URL.listener;

function connect(
  port: number,
  typeUrl: string,
  subscribe: string[] = [],
  initial: Record<string, string> = {},
): TestAdsClient {
  const client = TestAdsClient.delta(port);
  client.send({
    node: testNode(sidecarId("delta")),
    type_url: typeUrl,
    resource_names_subscribe: subscribe,
    initial_resource_versions: initial,
  });
  return client;
}

let probes = 0;

/**
 * Subscribes to a listener that does not exist and expects the answer (its name as removed) next: proves that
 * nothing else was sent in between, without waiting for silence.
 */
async function probe(client: TestAdsClient): Promise<void> {
  const name = `probe-${++probes}`;
  client.send({ type_url: LDS, resource_names_subscribe: [name] });
  const next = await client.next();
  assert.equal(next.typeUrl, LDS, "the next response answers the probe; nothing else was sent");
  assert.deepEqual(next.removed, [name]);
  client.ack(next);
}

const names = (r: TestResponse) => r.resources.map((x) => x.name).sort();

Deno.test("Delta ADS sends only changed resources and removals", async (t) => {
  const server = await startTestServer();
  const client = connect(server.port, CDS);
  try {
    const first = await client.next();
    await t.step("a wildcard subscription gets every cluster with its version", () => {
      assert.deepEqual(names(first), ["a", "b"]);
      assert.equal(Object.keys(first.versions).length, 2);
      assert.deepEqual(first.removed, []);
    });
    client.ack(first);
    await probe(client);

    await t.step("a push that changes one cluster sends that cluster alone", async () => {
      server.push(testPush("v2", { clusters: { a: 7, b: 0 } }), { configsUpdated: ["Cluster/test/a"] });
      const update = await client.next();
      assert.equal(update.typeUrl, CDS);
      assert.equal(update.version, "v2");
      assert.deepEqual(names(update), ["a"]);
      assert.notEqual(update.versions.a, first.versions.a);
      client.ack(update);
    });

    await t.step("what the proxy holds still lists the cluster it was not sent again", () => {
      const held = server.service.connections()[0].sentResources().get(CDS)?.resources;
      assert.deepEqual([...held?.keys() ?? []].sort(), ["a", "b"]);
    });

    await t.step(
      "the same content pushed again sends nothing",
      async () => {
        server.push(testPush("v2", { clusters: { a: 7, b: 0 } }), { configsUpdated: ["Cluster/test/a"] });
        await waitFor(
          () => server.service.queueStats().inFlight + server.service.queueStats().pending === 0,
          "push",
        );
        await probe(client);
      },
    );

    await t.step("a push that removes a cluster sends its name in removed_resources", async () => {
      server.push(testPush("v3", { clusters: { a: 7 } }), { configsUpdated: ["Cluster/test/b"] });
      const update = await client.next();
      assert.deepEqual(update.resources, []);
      assert.deepEqual(update.removed, ["b"]);
      client.ack(update);
    });

    await t.step("a push that changes nothing the proxy holds sends nothing", async () => {
      server.push(testPush("v4", { clusters: { a: 7 } }), { configsUpdated: ["Cluster/test/b"] });
      await waitFor(
        () => server.service.queueStats().inFlight + server.service.queueStats().pending === 0,
        "push",
      );
      await probe(client);
    });
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Delta ADS honours initial_resource_versions on reconnect", async () => {
  const server = await startTestServer();
  const before = connect(server.port, CDS);
  const held = (await before.next()).versions;
  before.close();
  try {
    const after = connect(server.port, CDS, [], { a: held.a, b: "stale", gone: "x" });
    const response = await after.next();
    assert.deepEqual(names(response), ["b"], "a is unchanged and not sent again");
    assert.equal(response.versions.b, held.b);
    assert.deepEqual(response.removed, ["gone"]);
    after.close();
  } finally {
    await server.close();
  }
});

Deno.test("Delta ADS answers the first request of a type even when the proxy holds everything", async () => {
  const server = await startTestServer();
  const before = connect(server.port, CDS);
  const held = (await before.next()).versions;
  before.close();
  try {
    const after = connect(server.port, CDS, [], { ...held });
    const response = await after.next();
    assert.equal(response.typeUrl, CDS);
    assert.deepEqual(response.resources, []);
    assert.deepEqual(response.removed, []);
    after.close();
  } finally {
    await server.close();
  }
});

Deno.test("Delta ADS first answers carrying the same whole list are one response; a later change is not", async () => {
  const server = await startTestServer();
  const clients = [connect(server.port, CDS), connect(server.port, CDS), connect(server.port, CDS)];
  try {
    const first = await Promise.all(clients.map((client) => client.next()));
    for (const response of first) assert.deepEqual(names(response), ["a", "b"]);
    assert.equal(first[1].nonce, first[2].nonce, "the list's second use on: one framed answer");
    assert.notEqual(first[0].nonce, first[1].nonce);
    clients.forEach((client, i) => client.ack(first[i]));
    for (const client of clients) await probe(client);
    server.push(testPush("v2", { clusters: { a: 0, b: 1 } }), { configsUpdated: ["Cluster/test/b"] });
    const second = await Promise.all(clients.map((client) => client.next()));
    for (const response of second) assert.deepEqual(names(response), ["b"]);
    assert.equal(new Set(second.map((r) => r.nonce)).size, 3, "changes are framed per proxy");
    assert.equal(await metricValue(server.metrics, "discovery_xds_expired_nonce", { type: "cds" }), 0);
  } finally {
    for (const client of clients) client.close();
    await server.close();
  }
});

Deno.test("Delta ADS subscribes and unsubscribes names one by one", async (t) => {
  const server = await startTestServer();
  const client = connect(server.port, EDS, ["a"]);
  try {
    await t.step("subscribing to a sends it", async () => {
      const first = await client.next();
      assert.deepEqual(names(first), ["a"]);
      client.ack(first);
    });
    await t.step("subscribing to b sends b alone", async () => {
      client.send({ type_url: EDS, resource_names_subscribe: ["b"] });
      const second = await client.next();
      assert.deepEqual(names(second), ["b"]);
      client.ack(second);
    });
    await t.step("unsubscribing from a is not answered and stops its updates", async () => {
      client.send({ type_url: EDS, resource_names_unsubscribe: ["a"] });
      await probe(client);
      assert.deepEqual(server.service.connections()[0].watches()[EDS], ["b"]);
      server.push(testPush("v2", { endpoints: { a: ["10.9.9.9"], b: ["10.0.0.2"] } }), {
        full: false,
        configsUpdated: [endpointsKey("a")],
      });
      await waitFor(
        () => server.service.queueStats().inFlight + server.service.queueStats().pending === 0,
        "push",
      );
      await probe(client);
    });
    await t.step("an endpoint-only push sends the changed subscribed cluster", async () => {
      server.push(testPush("v3", { endpoints: { a: ["10.9.9.9"], b: ["10.7.7.7"] } }), {
        full: false,
        configsUpdated: [endpointsKey("a"), endpointsKey("b")],
      });
      const update = await client.next();
      assert.deepEqual(names(update), ["b"]);
      assert.match(JSON.stringify(update.resources[0].fields), /10\.7\.7\.7/);
      client.ack(update);
    });
    await t.step("subscribing to a name that does not exist reports it removed", async () => {
      client.send({ type_url: EDS, resource_names_subscribe: ["nope"] });
      const response = await client.next();
      assert.deepEqual(response.resources, []);
      assert.deepEqual(response.removed, ["nope"]);
      client.ack(response);
    });
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Delta ADS proxies subscribing the same names keep their later changes apart", async () => {
  const server = await startTestServer();
  const clients = [connect(server.port, EDS, ["a", "b"]), connect(server.port, EDS, ["a", "b"])];
  try {
    for (const client of clients) {
      const first = await client.next();
      assert.deepEqual(names(first), ["a", "b"]);
      client.ack(first);
    }
    clients[0].send({ type_url: EDS, resource_names_unsubscribe: ["a"] });
    await probe(clients[0]);
    const watched = server.service.connections().map((c) => c.watches()[EDS].join(",")).sort();
    assert.deepEqual(watched, ["a,b", "b"], "one proxy's unsubscription is its own");
    server.push(testPush("v2", { endpoints: { a: ["10.9.9.9"], b: ["10.0.0.2"] } }), {
      full: false,
      configsUpdated: [endpointsKey("a")],
    });
    const update = await clients[1].next();
    assert.deepEqual(names(update), ["a"]);
    clients[1].ack(update);
    await probe(clients[0]);
    clients[0].send({ type_url: EDS, resource_names_subscribe: ["a"] });
    const again = await clients[0].next();
    assert.deepEqual(names(again), ["a"], "subscribing again sends the resource");
    assert.match(JSON.stringify(again.resources[0].fields), /10\.9\.9\.9/);
  } finally {
    for (const client of clients) client.close();
    await server.close();
  }
});

Deno.test("Delta ADS counts NACKs and expired nonces but still applies subscription changes", async () => {
  const server = await startTestServer();
  const client = connect(server.port, EDS, ["a"]);
  try {
    const first = await client.next();
    client.send({
      type_url: EDS,
      response_nonce: first.nonce,
      error_detail: { code: 13, message: "bad lb" },
    });
    await probe(client);
    assert.equal(await metricValue(server.metrics, "discovery_total_xds_rejects", { type: "eds" }), 1);
    assert.equal(
      await metricValue(server.metrics, "discovery_xds_eds_reject", { node: "delta.test", err: "Internal" }),
      1,
    );
    client.send({ type_url: EDS, response_nonce: "not-a-nonce-we-sent", resource_names_subscribe: ["b"] });
    const second = await client.next();
    assert.deepEqual(names(second), ["b"], "the subscription in a stale request still counts");
    assert.equal(await metricValue(server.metrics, "discovery_xds_expired_nonce", { type: "eds" }), 1);
  } finally {
    client.close();
    await server.close();
  }
});
