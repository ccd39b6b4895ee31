import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { TestAdsClient, testNode, type TestResponse } from "./_test_ads_client.ts";
import { endpointsKey, metricValue, sidecarId, startTestServer, testPush, waitFor } from "./_test_support.ts";

const CDS = TYPE_URL.cluster, EDS = TYPE_URL.endpoint, LDS = TYPE_URL.listener, RDS = TYPE_URL.route;

/** Opens a stream and sends the first request (with the node) for `typeUrl`. */
function connect(port: number, typeUrl: string, names: string[] = [], pod = "app"): TestAdsClient {
  const client = TestAdsClient.sotw(port);
  client.send({ node: testNode(sidecarId(pod)), type_url: typeUrl, resource_names: names });
  return client;
}

/** ACKs `response`, keeping `names` watched. */

/**
 * Asks for a listener and expects the LDS answer as the very next response: proves that nothing else (a
 * resend) was sent in between, without waiting for silence.
 */
async function probe(client: TestAdsClient): Promise<TestResponse> {
  client.send({ type_url: LDS, resource_names: [] });
  const next = await client.next();
  assert.equal(next.typeUrl, LDS, "the next response answers the probe; nothing else was sent");
  return next;
}

Deno.test("SotW ADS refuses a stream whose first request has no valid node", async (t) => {
  const server = await startTestServer();
  try {
    await t.step("no node ends the stream with INVALID_ARGUMENT", async () => {
      const client = TestAdsClient.sotw(server.port);
      client.send({ type_url: CDS });
      const status = await client.ended();
      client.close();
      assert.equal(status.code, 3);
      assert.match(status.details, /first request on an ADS stream must carry a node/);
    });
    await t.step("a malformed node id ends the stream with the parser's message", async () => {
      const client = TestAdsClient.sotw(server.port);
      client.send({ node: testNode("sidecar~not-an-ip~app.test~test.svc.cluster.local"), type_url: CDS });
      const status = await client.ended();
      client.close();
      assert.equal(status.code, 3);
      assert.match(status.details, /address "not-an-ip": expected an IPv4 or IPv6 address/);
    });
    assert.equal(server.service.connections().length, 0);
  } finally {
    await server.close();
  }
});

Deno.test("A peer sending garbage is dropped alone, counted and logged at warn", async () => {
  const server = await startTestServer();
  const healthy = connect(server.port, CDS, [], "healthy");
  try {
    await healthy.next();
    const garbage = TestAdsClient.sotw(server.port);
    garbage.sendBytes(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]));
    const status = await garbage.ended();
    garbage.close();
    assert.equal(status.code, 3, "INVALID_ARGUMENT");
    assert.equal(
      await metricValue(server.metrics, "discovery_xds_refused_streams", { code: "InvalidArgument" }),
      1,
    );
    assert.ok(
      server.logger.lines.some((line) => line.level === "warn" && line.msg === "refused ADS stream"),
      "one warn line names the refused peer",
    );
    server.push(testPush("v2", { clusters: { a: 0, b: 0, c: 0 } }));
    assert.equal((await healthy.next()).version, "v2", "the other stream is still served");
    assert.equal(await metricValue(server.metrics, "discovery_xds"), 1);
  } finally {
    healthy.close();
    await server.close();
  }
});

Deno.test("A peer refused stream after stream costs one warn line a minute, every refusal counted", async () => {
  const server = await startTestServer();
  try {
    for (let i = 0; i < 30; i++) {
      const client = TestAdsClient.sotw(server.port);
      client.send({
        node: testNode(`sidecar~not-an-ip-${i}~app.test~test.svc.cluster.local`),
        type_url: CDS,
      });
      assert.equal((await client.ended()).code, 3);
      client.close();
    }
    assert.equal(
      await metricValue(server.metrics, "discovery_xds_refused_streams", { code: "InvalidArgument" }),
      30,
    );
    const warned = server.logger.lines.filter((line) => line.msg === "refused ADS stream");
    assert.equal(warned.length, 1, "one line for the peer address this minute");
    assert.match(String(warned[0].fields?.details), /not-an-ip-0/);
  } finally {
    await server.close();
  }
});

Deno.test("SotW ADS refuses streams with UNAVAILABLE until the first snapshot exists", async () => {
  const server = await startTestServer({ push: null });
  try {
    const client = connect(server.port, CDS);
    const status = await client.ended();
    client.close();
    assert.equal(status.code, 14);
    assert.match(status.details, /not ready/);
  } finally {
    await server.close();
  }
});

Deno.test("ADS refuses streams with UNAVAILABLE, saying why, while the server waits for its sources", async () => {
  let waiting: string | undefined = "waiting for every source to sync (registries not synced: Orchestrator)";
  const server = await startTestServer({ waiting: () => waiting });
  try {
    for (const client of [connect(server.port, CDS), TestAdsClient.delta(server.port)]) {
      if (client.delta) client.send({ node: testNode(sidecarId("app")), type_url: CDS });
      const status = await client.ended();
      client.close();
      assert.equal(status.code, 14);
      assert.equal(
        status.details,
        "Discovery is not ready: waiting for every source to sync (registries not synced: Orchestrator); retry shortly",
      );
    }
    assert.equal(
      await metricValue(server.metrics, "discovery_xds_refused_streams", { code: "Unavailable" }),
      2,
    );
    assert.deepEqual(
      server.logger.lines.filter((line) => /ADS stream/.test(line.msg)).map((line) => [line.level, line.msg]),
      [["info", "turned an ADS stream away: not ready"]],
      "the server's own state is no peer's fault: one info line",
    );
    waiting = undefined;
    const client = connect(server.port, CDS);
    assert.equal((await client.next()).version, "v1", "served once the server stops waiting");
    client.close();
  } finally {
    await server.close();
  }
});

Deno.test("SotW ADS answers a new watch, records an ACK and does not answer it", async () => {
  const server = await startTestServer();
  const client = connect(server.port, CDS);
  const startedAt = Date.now();
  try {
    const first = await client.next();
    assert.equal(first.typeUrl, CDS);
    assert.equal(first.version, "v1");
    assert.deepEqual(first.resources.map((r) => r.name), ["a", "b"]);
    assert.equal(await metricValue(server.metrics, "discovery_xds"), 1);
    client.ack(first);
    await probe(client);
    const [connection] = server.service.connections();
    const sync = connection.syncStatus()[CDS];
    assert.equal(sync.nonceAcked, first.nonce);
    assert.equal(sync.versionAcked, "v1");
    // Times are ISO 8601, and the ACK is not older than the response it acknowledges.
    const [sentAt, ackedAt] = [Date.parse(sync.sentAt!), Date.parse(sync.ackedAt!)];
    assert.match(sync.sentAt!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(startedAt <= sentAt && sentAt <= ackedAt && ackedAt <= Date.now());
    assert.equal(await metricValue(server.metrics, "discovery_xds_pushes", { type: "cds" }), 1);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("SotW ADS answers an ACK whose resource names changed with every watched name", async () => {
  const server = await startTestServer();
  const client = connect(server.port, EDS, ["a"]);
  try {
    const first = await client.next();
    assert.deepEqual(first.resources.map((r) => r.name), ["a"]);
    client.ack(first, ["a", "b"]);
    const second = await client.next();
    assert.equal(second.typeUrl, EDS);
    assert.deepEqual(second.resources.map((r) => r.name).sort(), ["a", "b"]);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("SotW ADS counts a NACK, logs the proxy's error text, and does not resend", async () => {
  const server = await startTestServer();
  const client = connect(server.port, CDS);
  try {
    const first = await client.next();
    client.send({
      type_url: CDS,
      version_info: "",
      response_nonce: first.nonce,
      error_detail: { code: 3, message: "cluster a: bad connect_timeout" },
    });
    await probe(client);
    assert.equal(await metricValue(server.metrics, "discovery_total_xds_rejects", { type: "cds" }), 1);
    assert.equal(
      await metricValue(server.metrics, "discovery_xds_cds_reject", {
        node: "app.test",
        err: "InvalidArgument",
      }),
      1,
    );
    const warned = server.logger.lines.filter((e) => e.level === "warn" && e.msg === "proxy rejected config");
    assert.equal(warned.length, 1);
    assert.equal(warned[0].fields?.error, "cluster a: bad connect_timeout");
    const sync = server.service.connections()[0].syncStatus()[CDS];
    assert.equal(sync.lastNack?.message, "cluster a: bad connect_timeout");
    assert.equal(sync.nonceAcked, undefined, "a NACK is not an ACK");
    server.push(testPush("v2"));
    const again = await client.next();
    assert.equal(again.typeUrl, CDS, "the next push offers the rejected clusters again, though unchanged");
    assert.equal(again.version, "v2");
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("SotW ADS ignores and counts a request with an expired nonce", async () => {
  const server = await startTestServer();
  const client = connect(server.port, CDS);
  try {
    const first = await client.next();
    client.ack(first);
    await probe(client);
    server.push(testPush("v2", { clusters: { a: 0, b: 0, c: 0 } }));
    const second = await client.next();
    assert.equal(second.typeUrl, CDS);
    assert.equal(second.version, "v2");
    // The proxy re-sends the first nonce with other names: stale, so neither ACKed nor answered.
    client.send({ type_url: CDS, version_info: "v1", response_nonce: first.nonce, resource_names: ["a"] });
    await probe(client);
    assert.equal(await metricValue(server.metrics, "discovery_xds_expired_nonce", { type: "cds" }), 1);
    assert.equal(server.service.connections()[0].syncStatus()[CDS].nonceAcked, first.nonce);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("NACKs and stale nonces for types a client makes up are counted under one series", async () => {
  // Each made-up type URL was a series of its own, never removed: any client of 15010 could grow the
  // registry and every scrape without bound (2,000 NACKs made 2 MB of exposition).
  const server = await startTestServer();
  const client = connect(server.port, CDS);
  try {
    await client.next();
    for (let i = 0; i < 200; i++) {
      const typeUrl = `type.googleapis.com/made.up.Type${i}`;
      client.send({ type_url: typeUrl, response_nonce: "n", error_detail: { code: 3, message: "no" } });
      client.send({ type_url: typeUrl, resource_names: ["a"] });
      client.send({ type_url: typeUrl, response_nonce: "stale", resource_names: ["a"] });
    }
    await probe(client);
    const exposition = await server.metrics.render();
    const series = (name: string) =>
      exposition.split("\n").filter((line) => line.startsWith(`${name}{`)).sort();
    assert.deepEqual(series("discovery_total_xds_rejects"), [
      'discovery_total_xds_rejects{type="other"} 200',
    ]);
    assert.deepEqual(series("discovery_xds_expired_nonce"), [
      'discovery_xds_expired_nonce{type="other"} 200',
    ]);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("SotW ADS unsubscribes a non-wildcard type on empty names", async () => {
  const server = await startTestServer();
  const client = connect(server.port, EDS, ["a"]);
  try {
    const first = await client.next();
    client.ack(first, []);
    await probe(client);
    const connection = server.service.connections()[0];
    assert.equal(connection.watches()[EDS], undefined);
    server.push(testPush("v2", { endpoints: { a: ["10.9.9.9"], b: ["10.0.0.2"] } }), {
      full: false,
      configsUpdated: [endpointsKey("a")],
    });
    await waitFor(
      () => server.service.queueStats().pending === 0 && server.service.queueStats().inFlight === 0,
      "push",
    );
    await probe(client);
  } finally {
    client.close();
    await server.close();
  }
});

/**
 * Watches LDS, EDS and CDS besides the RDS watch `client` opened with (in that order, the reverse of push
 * order), ACKing each answer with `watched` names, and proves nothing else is pending.
 */
async function watchAll(client: TestAdsClient, watched: Record<string, string[]>): Promise<void> {
  for (const typeUrl of [LDS, EDS, CDS]) {
    const response = await client.next();
    client.ack(response, watched[response.typeUrl]);
    client.send({ type_url: typeUrl, resource_names: watched[typeUrl] });
  }
  const last = await client.next();
  client.ack(last, watched[last.typeUrl]);
  await probe(client);
}

Deno.test("SotW ADS pushes types in the order CDS, EDS, LDS, RDS whatever the subscription order", async () => {
  const server = await startTestServer();
  const watched: Record<string, string[]> = { [RDS]: ["r1"], [LDS]: [], [EDS]: ["a"], [CDS]: [] };
  const client = connect(server.port, RDS, ["r1"]);
  try {
    await watchAll(client, watched);
    server.push(testPush("v2"), { forced: true });
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await client.next();
      assert.equal(response.version, "v2");
      order.push(response.typeUrl);
    }
    assert.deepEqual(order, [CDS, EDS, LDS, RDS]);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("SotW ADS pushes only the types whose resources changed, EDS with CDS, and everything when forced", async (t) => {
  const server = await startTestServer();
  const watched: Record<string, string[]> = { [RDS]: ["r1"], [LDS]: [], [EDS]: ["a", "b"], [CDS]: [] };
  const client = connect(server.port, RDS, ["r1"]);
  const nextTypes = async (count: number, version: string) => {
    const types: string[] = [];
    for (let i = 0; i < count; i++) {
      const response = await client.next();
      assert.equal(response.version, version);
      client.ack(response, watched[response.typeUrl]);
      types.push(response.typeUrl);
    }
    await probe(client);
    return types;
  };
  try {
    await watchAll(client, watched);
    await t.step("a route change sends RDS alone", async () => {
      server.push(testPush("v2", { routes: { r1: "moved.example.com", r2: "r2.example.com" } }));
      assert.deepEqual(await nextTypes(1, "v2"), [RDS]);
    });
    await t.step(
      "a cluster change sends CDS, and EDS after it though its endpoints are the same",
      async () => {
        server.push(
          testPush("v3", { clusters: { a: 3, b: 0 }, routes: { r1: "moved.example.com", r2: "x" } }),
        );
        assert.deepEqual(await nextTypes(2, "v3"), [CDS, EDS]);
      },
    );
    await t.step("a push that changes nothing the proxy holds sends nothing", async () => {
      server.push(testPush("v4", { clusters: { a: 3, b: 0 }, routes: { r1: "moved.example.com", r2: "y" } }));
      await waitFor(
        () => server.service.queueStats().inFlight + server.service.queueStats().pending === 0,
        "push",
      );
      await probe(client);
      const sync = server.service.connections()[0].syncStatus();
      assert.equal(sync[CDS].unchangedThrough, "v4", "what CDS was sent stands for v4 too");
      assert.equal(sync[CDS].versionSent, "v3");
    });
    const endpoints = { a: ["10.9.9.9"], b: ["10.0.0.2"] };
    const routes = { r1: "moved.example.com" };
    await t.step(
      "after an endpoint-only update, a push that changes nothing the proxy holds sends nothing",
      async () => {
        server.push(testPush("v5", { clusters: { a: 3, b: 0 }, endpoints, routes }), {
          full: false,
          configsUpdated: [endpointsKey("a")],
        });
        const update = await client.next();
        assert.deepEqual(update.resources.map((r) => r.name), ["a"], "the changed cluster alone");
        client.ack(update, watched[EDS]);
        server.push(testPush("v6", { clusters: { a: 3, b: 0 }, endpoints, routes }));
        await waitFor(
          () => server.service.queueStats().inFlight + server.service.queueStats().pending === 0,
          "push",
        );
        await probe(client);
        assert.equal(server.service.connections()[0].syncStatus()[EDS].unchangedThrough, "v6");
      },
    );
    await t.step("a forced push sends every type", async () => {
      server.push(testPush("v7", { clusters: { a: 3, b: 0 }, endpoints, routes }), { forced: true });
      assert.deepEqual(await nextTypes(4, "v7"), [CDS, EDS, LDS, RDS]);
    });
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("SotW ADS serves a reconnecting proxy its full state again", async () => {
  const server = await startTestServer();
  try {
    const before = connect(server.port, CDS);
    const first = await before.next();
    before.ack(first);
    await probe(before);
    before.close();
    await waitFor(() => server.service.connections().length === 0, "the old stream to close");
    assert.equal(await metricValue(server.metrics, "discovery_xds"), 0);
    // Envoy reconnects with its last applied version and no nonce.
    const after = TestAdsClient.sotw(server.port);
    after.send({ node: testNode(sidecarId("app")), type_url: CDS, version_info: first.version });
    const again = await after.next();
    assert.deepEqual(again.resources.map((r) => r.name), ["a", "b"]);
    assert.notEqual(again.nonce, first.nonce);
    after.close();
  } finally {
    await server.close();
  }
});

Deno.test("SotW ADS sends only the affected endpoints on an endpoint-only push", async () => {
  const server = await startTestServer();
  const client = connect(server.port, CDS);
  try {
    client.ack(await client.next());
    client.send({ type_url: EDS, resource_names: ["a", "b"] });
    const eds = await client.next();
    client.ack(eds, ["a", "b"]);
    await probe(client);
    const edsBuilds = server.counts.eds;
    server.push(testPush("v1", { endpoints: { a: ["10.9.9.9"], b: ["10.0.0.2"] } }), {
      full: false,
      configsUpdated: [endpointsKey("a")],
    });
    const update = await client.next();
    assert.equal(update.typeUrl, EDS, "no CDS on an endpoint-only push");
    assert.deepEqual(update.resources.map((r) => r.name), ["a"]);
    const lb = (update.resources[0].fields.endpoints as { lb_endpoints: unknown[] }[])[0].lb_endpoints;
    assert.match(
      JSON.stringify(lb),
      /10\.9\.9\.9/,
      "the invalidated entry was rebuilt with the new endpoints",
    );
    assert.equal(server.counts.eds, edsBuilds + 1);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("SotW ADS encodes a resource once for every proxy of the same shape", async () => {
  const server = await startTestServer();
  const clients = ["one", "two", "three"].map((pod) => connect(server.port, CDS, [], pod));
  try {
    for (const client of clients) {
      assert.deepEqual((await client.next()).resources.map((r) => r.name), ["a", "b"]);
    }
    assert.equal(server.counts.cds, 2, "two clusters, built once each");
    server.push(testPush("v2", { clusters: { a: 0, b: 0 } }), {
      configsUpdated: ["Cluster/test/b"],
      forced: true,
    });
    for (const client of clients) assert.equal((await client.next()).version, "v2");
    assert.equal(server.counts.cds, 3, "only b was rebuilt, once for all three proxies");
  } finally {
    for (const client of clients) client.close();
    await server.close();
  }
});

Deno.test("SotW ADS frames one response for every proxy handed the same list, and each ACKs it", async () => {
  const server = await startTestServer();
  const clients = ["one", "two", "three"].map((pod) => connect(server.port, CDS, [], pod));
  try {
    const first = await Promise.all(clients.map((client) => client.next()));
    // The list's first use is framed in place with a nonce of its own; from its second use on, one response.
    assert.equal(first[1].nonce, first[2].nonce);
    assert.notEqual(first[0].nonce, first[1].nonce);
    for (const response of first) assert.deepEqual(response.resources.map((r) => r.name), ["a", "b"]);
    clients.forEach((client, i) => client.ack(first[i]));
    for (const client of clients) await probe(client);
    const byPod = (pod: string) =>
      server.service.connections().find((c) => c.proxy.nodeId === sidecarId(pod))!;
    for (const [i, pod] of ["one", "two", "three"].entries()) {
      assert.equal(byPod(pod).syncStatus()[CDS].nonceAcked, first[i].nonce, `${pod} ACKed its response`);
    }
    server.push(testPush("v2", { clusters: { a: 0, b: 0, c: 0 } }));
    const second = await Promise.all(clients.map((client) => client.next()));
    assert.ok(second.every((response) => response.version === "v2" && response.resources.length === 3));
    const nonces = new Set(second.map((response) => response.nonce));
    assert.equal(nonces.size, 2, "a new push frames anew: one nonce in place, one shared");
    for (const n of nonces) assert.ok(!first.some((response) => response.nonce === n), "never an old nonce");
    assert.equal(await metricValue(server.metrics, "discovery_xds_expired_nonce", { type: "cds" }), 0);
  } finally {
    for (const client of clients) client.close();
    await server.close();
  }
});

Deno.test("SotW ADS does not answer a type no generator serves, and warns once", async () => {
  const server = await startTestServer();
  const client = connect(server.port, TYPE_URL.secret, ["default"]);
  try {
    await probe(client);
    client.send({ type_url: TYPE_URL.secret, resource_names: ["default", "ROOTCA"] });
    await probe(client);
    const warned = server.logger.lines.filter((e) => e.msg.startsWith("no generator for the requested type"));
    assert.equal(warned.length, 1);
    assert.equal(warned[0].fields?.type, TYPE_URL.secret);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Requests ADS leaves unanswered cost one warn line per peer a minute, over any number of streams", async () => {
  const server = await startTestServer();
  const clients: TestAdsClient[] = [];
  try {
    for (let i = 0; i < 10; i++) {
      for (const delta of [false, true]) {
        const client = delta ? TestAdsClient.delta(server.port) : TestAdsClient.sotw(server.port);
        clients.push(client);
        client.send({
          node: testNode(sidecarId(`p${i}`)),
          type_url: TYPE_URL.secret,
          ...(delta ? { resource_names_subscribe: ["default"] } : { resource_names: ["default"] }),
        });
        for (let j = 0; j < 20; j++) client.send({ type_url: j % 2 === 0 ? "" : TYPE_URL.secret });
        client.send({ type_url: LDS, resource_names: [] });
        assert.equal((await client.next()).typeUrl, LDS, "the stream is still served");
      }
    }
    const lines = (prefix: string) => server.logger.lines.filter((e) => e.msg.startsWith(prefix)).length;
    assert.equal(lines("ignoring ADS request without type_url"), 1);
    assert.equal(lines("ignoring delta ADS request without type_url"), 1);
    assert.equal(lines("no generator for the requested type"), 1);
  } finally {
    for (const client of clients) client.close();
    await server.close();
  }
});

Deno.test("SotW ADS counts a resource that cannot be encoded and keeps the stream and the proxy's config", async () => {
  const server = await startTestServer();
  const client = connect(server.port, CDS);
  try {
    client.ack(await client.next());
    await probe(client);
    server.push(testPush("v2", { clusters: { a: -1, b: 0 } }), { forced: true });
    const next = await client.next();
    assert.equal(next.typeUrl, LDS, "the push skipped CDS and sent the rest");
    assert.equal(await metricValue(server.metrics, "discovery_xds_pushes", { type: "cds_builderr" }), 1);
    assert.equal(
      await metricValue(server.metrics, "discovery_total_xds_internal_errors", { type: "cds" }),
      1,
    );
    const logged = server.logger.lines.find((e) => e.level === "error");
    assert.match(
      String(logged?.fields?.error),
      /Generating ".*Cluster" for proxy "app.test" failed: .*connect_timeout/,
    );
    await probe(client);
  } finally {
    client.close();
    await server.close();
  }
});
