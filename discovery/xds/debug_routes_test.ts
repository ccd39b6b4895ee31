import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { Router } from "@mesh/shared/http/router";
import { TestAdsClient, testNode } from "./_test_ads_client.ts";
import { sidecarId, startTestServer, testPush, type TestServer, waitFor } from "./_test_support.ts";
import { addXdsDebugRoutes } from "./debug_routes.ts";

async function get(
  router: Router,
  path: string,
  method = "GET",
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await router.handle(new Request(`http://localhost${path}`, { method }));
  return { status: response.status, body: await response.json() };
}

/** A server with one SotW proxy ("app.test") that watches CDS and EDS [a] and has ACKed both. */
async function withProxy(
  adminEndpoints: boolean,
  body: (server: TestServer, router: Router, client: TestAdsClient) => Promise<void>,
): Promise<void> {
  const server = await startTestServer();
  const router = addXdsDebugRoutes(new Router(), server.service, { adminEndpoints });
  const client = TestAdsClient.sotw(server.port);
  try {
    client.send({ node: testNode(sidecarId("app")), type_url: TYPE_URL.cluster });
    const cds = await client.next();
    client.send({ type_url: TYPE_URL.cluster, version_info: cds.version, response_nonce: cds.nonce });
    client.send({ type_url: TYPE_URL.endpoint, resource_names: ["a"] });
    const eds = await client.next();
    client.send({
      type_url: TYPE_URL.endpoint,
      version_info: eds.version,
      response_nonce: eds.nonce,
      resource_names: ["a"],
    });
    await body(server, router, client);
  } finally {
    client.close();
    await server.close();
  }
}

Deno.test("/debug/adsz lists connections with their watches", async () => {
  await withProxy(false, async (_server, router) => {
    const { status, body } = await get(router, "/debug/adsz");
    assert.equal(status, 200);
    assert.equal(body.totalClients, 1);
    const [entry] = body.clients as Record<string, unknown>[];
    assert.equal(entry.proxyId, "app.test");
    assert.equal(entry.protocol, "sotw");
    assert.deepEqual(entry.watches, { CDS: ["*"], EDS: ["a"] });
  });
});

Deno.test("/debug/adsz pushes to every proxy only on POST with ENABLE_ADMIN_ENDPOINTS", async (t) => {
  await t.step("without admin endpoints a push is refused, by GET or POST", async () => {
    await withProxy(false, async (server, router) => {
      const before = server.service.connections()[0].syncStatus()[TYPE_URL.cluster].nonceSent;
      assert.equal((await get(router, "/debug/adsz?push=true")).status, 403);
      assert.equal((await get(router, "/debug/adsz?push=true", "POST")).status, 403);
      assert.equal(server.service.connections()[0].syncStatus()[TYPE_URL.cluster].nonceSent, before);
    });
  });
  await t.step("with admin endpoints GET is refused and POST pushes", async () => {
    await withProxy(true, async (_server, router, client) => {
      assert.equal((await get(router, "/debug/adsz?push=true")).status, 405);
      const pushed = await get(router, "/debug/adsz?push=true", "POST");
      assert.equal(pushed.body.pushed, true);
      assert.equal(pushed.body.totalClients, 1);
      assert.equal(pushed.body.clients, undefined, "a push answers with its outcome, not the listing");
      assert.equal((await client.next()).typeUrl, TYPE_URL.cluster);
      assert.equal((await client.next()).typeUrl, TYPE_URL.endpoint);
    });
  });
});

Deno.test("/debug/syncz shows sent and acknowledged nonces per type", async () => {
  await withProxy(false, async (server, router) => {
    const connection = server.service.connections()[0];
    const sent = connection.syncStatus()[TYPE_URL.cluster].nonceSent;
    const { body } = await get(router, "/debug/syncz");
    const types = (body as unknown as { types: Record<string, Record<string, string>> }[])[0].types;
    assert.equal(types.CDS.nonceSent, sent);
    assert.equal(types.CDS.versionSent, "v1");
  });
});

Deno.test("/debug/config_dump and /debug/edsz show what a proxy was sent, decoded", async (t) => {
  await withProxy(false, async (_server, router) => {
    await t.step("config_dump decodes every type", async () => {
      const { status, body } = await get(router, "/debug/config_dump?proxyID=app.test");
      assert.equal(status, 200);
      const configs = body.configs as Record<string, { resources: Record<string, unknown>[] }>;
      assert.deepEqual(configs.CDS.resources.map((r) => r.name), ["a", "b"]);
      assert.equal(configs.CDS.resources[0]["@type"], TYPE_URL.cluster);
      assert.equal(configs.EDS.resources[0].cluster_name, "a");
    });
    await t.step("edsz shows the endpoints", async () => {
      const { body } = await get(router, "/debug/edsz?proxyID=app.test");
      assert.match(JSON.stringify(body.resources), /10\.0\.0\.1/);
    });
    await t.step("a missing proxyID is a 400 and an unknown one a 404", async () => {
      for (const path of ["/debug/config_dump", "/debug/edsz"]) {
        const missing = await get(router, path);
        assert.equal(missing.status, 400);
        assert.match(String(missing.body.error), /Missing query parameter "proxyID"/);
        const unknown = await get(router, `${path}?proxyID=nobody.test`);
        assert.equal(unknown.status, 404);
        assert.match(String(unknown.body.error), /No connected proxy "nobody.test"/);
      }
    });
  });
});

Deno.test("/debug/cachez shows the cached entries and counters", async () => {
  await withProxy(false, async (_server, router) => {
    const { body } = await get(router, "/debug/cachez");
    assert.equal(body.enabled, true);
    assert.equal(body.size, 3, "two clusters and one endpoint assignment");
    const entries = body.entries as { name: string; dependsOn: string[] }[];
    assert.deepEqual(entries.map((e) => e.name).sort(), ["a", "a", "b"]);
    const memos = body.memos as Record<string, { entries: number; bytes: number; maxBytes: number }>;
    assert.deepEqual(Object.keys(memos).sort(), ["nameLists", "names", "shapes"]);
    assert.equal(memos.names.entries, 1, "the one EDS name watched");
    assert.ok(memos.names.bytes <= memos.names.maxBytes);
    assert.equal(body.openStreams, 1);
  });
});

Deno.test("/debug/config_distribution tells which proxy acknowledged which version", async () => {
  await withProxy(false, async (server, router) => {
    await waitForAck(server);
    const { body } = await get(router, "/debug/config_distribution?resource=Cluster/test/a");
    const proxies = body.proxies as { proxyId: string; acked: Record<string, { version: string }> }[];
    assert.equal(proxies[0].proxyId, "app.test");
    assert.equal(proxies[0].acked.CDS.version, "v1");
    assert.deepEqual((body.resource as { inSync: string[] }).inSync, ["app.test"]);
  });
});

Deno.test("/debug/config_distribution counts a type a push had nothing new for as at that push", async () => {
  await withProxy(false, async (server, router) => {
    await waitForAck(server);
    // Only routes change: the proxy watches clusters and endpoints, so the push sends it nothing.
    server.push(testPush("v2", { routes: { r1: "moved.example.com", r2: "r2.example.com" } }), {
      configsUpdated: ["Route/test/r1"],
    });
    await waitFor(
      () => server.service.connections()[0].syncStatus()[TYPE_URL.endpoint].unchangedThrough === "v2",
      "the push",
    );
    const { body } = await get(router, "/debug/config_distribution?resource=Route/test/r1");
    const proxies = body.proxies as { acked: Record<string, { version: string }> }[];
    assert.equal(proxies[0].acked.CDS.version, "v2");
    assert.equal(proxies[0].acked.EDS.version, "v2");
    assert.deepEqual((body.resource as { inSync: string[] }).inSync, ["app.test"]);
    const sync = server.service.connections()[0].syncStatus()[TYPE_URL.cluster];
    assert.equal(sync.versionSent, "v1", "nothing was sent");
  });
});

function waitForAck(server: TestServer): Promise<void> {
  return waitFor(
    () => server.service.connections()[0]?.syncStatus()[TYPE_URL.endpoint]?.nonceAcked !== undefined,
    "the EDS ACK",
  );
}

Deno.test("/debug/force_disconnect exists only with ENABLE_ADMIN_ENDPOINTS and ends the proxy's stream", async (t) => {
  await t.step("not registered by default", async () => {
    await withProxy(false, async (_server, router) => {
      assert.equal((await get(router, "/debug/force_disconnect?proxyID=app.test")).status, 404);
    });
  });
  await t.step("with admin endpoints it disconnects the proxy", async () => {
    await withProxy(true, async (server, router, client) => {
      assert.equal((await get(router, "/debug/force_disconnect?proxyID=app.test")).status, 405, "GET");
      assert.equal((await get(router, "/debug/force_disconnect", "POST")).status, 400);
      assert.equal((await get(router, "/debug/force_disconnect?proxyID=nobody.test", "POST")).status, 404);
      const { status, body } = await get(router, "/debug/force_disconnect?proxyID=app.test", "POST");
      assert.equal(status, 200);
      assert.equal(body.disconnected, 1);
      assert.equal((await client.ended()).code, 14);
      assert.equal(server.service.connections().length, 0);
    });
  });
});
