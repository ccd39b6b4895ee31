import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { PushHistory } from "../push/push_history.ts";
import { TestAdsClient, testNode } from "./_test_ads_client.ts";
import { sidecarId, startTestServer, testPush, waitFor } from "./_test_support.ts";
import { proxyOverview, typeState } from "./proxy_overview.ts";

const CDS = TYPE_URL.cluster;

Deno.test("A type is in sync when the proxy ACKed the response standing for the latest push", () => {
  assert.equal(typeState({}, "v2"), "pending");
  assert.equal(typeState({ nonceSent: "v2/1" }, "v2"), "pending");
  assert.equal(typeState({ nonceSent: "a", versionSent: "v2", nonceAcked: "a" }, "v2"), "synced");
  assert.equal(typeState({ nonceSent: "a", versionSent: "v1", nonceAcked: "a" }, "v2"), "behind");
  assert.equal(
    typeState({ nonceSent: "a", versionSent: "v1", nonceAcked: "a", unchangedThrough: "v2" }, "v2"),
    "synced",
    "a push with nothing new for the type leaves the last response standing for it",
  );
  const nack = { nonce: "v2/1", code: "INVALID_ARGUMENT", message: "bad", at: "2026-01-01T00:00:00Z" };
  assert.equal(typeState({ nonceSent: "v2/1", nonceAcked: "v1/1", lastNack: nack }, "v2"), "rejected");
  assert.equal(
    typeState({ nonceSent: "v2/2", versionSent: "v2", nonceAcked: "v2/2", lastNack: nack }, "v2"),
    "synced",
    "a NACK of an older response does not count once the newest is ACKed",
  );
});

Deno.test("The overview follows a real proxy: pushed, ACKed, NACKed with its text; each push lands in the history", async () => {
  let now = 0;
  const history = new PushHistory({ bucketMs: 1000, buckets: 60, now: () => now });
  const server = await startTestServer({ pushHistory: history });
  const proxy = TestAdsClient.sotw(server.port);
  try {
    proxy.send({
      node: testNode(sidecarId("web-1"), { MESH_VERSION: "1.9.9", CLUSTER_ID: "east" }),
      type_url: CDS,
    });
    const first = await proxy.next();
    assert.equal(proxyOverview(server.service)[0]!.types[0]!.state, "pending");
    proxy.send({ type_url: CDS, version_info: first.version, response_nonce: first.nonce });
    await waitFor(() => proxyOverview(server.service)[0]!.types[0]!.state === "synced", "the ACK");
    const row = proxyOverview(server.service)[0]!;
    assert.equal(row.proxyId, "web-1.test");
    assert.equal(row.version, "1.9.9");
    assert.equal(row.cluster, "east");
    assert.equal(history.summary().pushes, 0, "answers to a request are not pushes");

    now = 5000;
    server.push(testPush("v2", { clusters: { a: 1, b: 0 } }));
    const pushed = await proxy.next();
    await waitFor(() => history.summary().pushes === 1, "the push in the history");
    assert.equal(history.series().at(-1)!.pushes, 1);
    proxy.send({
      type_url: CDS,
      version_info: first.version,
      response_nonce: pushed.nonce,
      error_detail: { code: 3, message: "cluster a: <bad>" },
    });
    await waitFor(() => proxyOverview(server.service)[0]!.types[0]!.state === "rejected", "the NACK");
    assert.equal(proxyOverview(server.service)[0]!.lastNack?.message, "cluster a: <bad>");
    assert.equal(proxyOverview(server.service)[0]!.lastNack?.type, "CDS");
  } finally {
    proxy.close();
    await server.close();
  }
});
