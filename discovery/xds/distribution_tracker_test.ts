import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { DistributionTracker } from "./distribution_tracker.ts";
import { NonceSource, nonceVersion } from "./nonce.ts";

Deno.test("Nonces carry the push version only when tracking asks for it", () => {
  const nonces = new NonceSource();
  const tracked = nonces.make("2024-01-01T00:00:00Z/3");
  assert.equal(nonceVersion(tracked), "2024-01-01T00:00:00Z/3");
  assert.equal(nonceVersion(nonces.make()), undefined);
  assert.notEqual(nonces.make(), nonces.make());
});

Deno.test("DistributionTracker tells which proxies applied the last change to a resource", async (t) => {
  let now = 0;
  const tracker = new DistributionTracker(60_000, () => now);
  tracker.recordPush("v1", undefined);
  now = 1_000;
  tracker.recordPush("v2", new Set(["VirtualService/ns/reviews"]));
  now = 2_000;
  tracker.recordPush("v3", new Set(["DestinationRule/ns/other"]));
  tracker.recordAck("a-1", "a.ns", TYPE_URL.cluster, "v3");
  tracker.recordAck("a-1", "a.ns", TYPE_URL.route, "v2");
  tracker.recordAck("b-2", "b.ns", TYPE_URL.route, "v1");

  await t.step("a resource changed in v2 is in sync on proxies at v2 or later", () => {
    const report = tracker.report("VirtualService/ns/reviews");
    assert.deepEqual(report.resource, {
      key: "VirtualService/ns/reviews",
      version: "v2",
      inSync: ["a.ns"],
      notInSync: ["b.ns"],
    });
    assert.deepEqual(report.proxies.find((p) => p.proxyId === "a.ns")?.acked.RDS?.version, "v2");
  });
  await t.step("a push with unknown changes counts as changing everything", () => {
    assert.equal(tracker.report("Gateway/ns/unrelated").resource?.version, "v1");
  });
  await t.step("history older than the retention is dropped, but the newest version stays", () => {
    now = 1_000_000;
    assert.deepEqual(tracker.report().history.map((v) => v.version), ["v3"]);
    assert.equal(tracker.report("VirtualService/ns/reviews").resource?.version, null);
  });
  await t.step("a closed connection is forgotten", () => {
    tracker.forget("a-1");
    assert.deepEqual(tracker.report().proxies.map((p) => p.proxyId), ["b.ns"]);
  });
});

Deno.test("DistributionTracker counts the connections holding a version, or a newer one, for every type", () => {
  let now = 0;
  const tracker = new DistributionTracker(1_000, () => now);
  tracker.recordPush("v1", undefined);
  tracker.recordPush("v2", undefined);
  tracker.recordAck("a-1", "a.ns", TYPE_URL.cluster, "v2");
  tracker.recordAck("a-1", "a.ns", TYPE_URL.listener, "v2");
  tracker.recordAck("b-2", "b.ns", TYPE_URL.cluster, "v2");
  tracker.recordAck("b-2", "b.ns", TYPE_URL.listener, "v1");
  const { total, acked } = tracker.acknowledged(["v1", "v2"]);
  assert.equal(total, 2);
  assert.deepEqual(Object.fromEntries(acked), { v1: 2, v2: 1 });

  now = 5_000;
  tracker.recordPush("v3", undefined);
  tracker.recordAck("a-1", "a.ns", TYPE_URL.cluster, "v3");
  tracker.recordAck("a-1", "a.ns", TYPE_URL.listener, "v3");
  // v1 and v2 are no longer kept: older than v3, which a-1 holds; b-2 holds only versions no longer kept.
  assert.deepEqual(Object.fromEntries(tracker.acknowledged(["v1", "v3"]).acked), { v1: 1, v3: 1 });
});

Deno.test("DistributionTracker reports keep the ACKs of their moment after later ACKs of the same type", () => {
  let now = 0;
  const tracker = new DistributionTracker(60_000, () => now);
  tracker.recordPush("v1", undefined);
  tracker.recordAck("a-1", "a.ns", TYPE_URL.route, "v1");
  const before = tracker.report();
  now = 1_000;
  tracker.recordPush("v2", new Set(["VirtualService/ns/reviews"]));
  tracker.recordAck("a-1", "a.ns", TYPE_URL.route, "v2");
  assert.deepEqual(before.proxies[0].acked.RDS, { version: "v1", ackedAt: 0 });
  assert.deepEqual(tracker.report().proxies[0].acked.RDS, { version: "v2", ackedAt: 1_000 });
  // An ACK of a version no longer retained (or never pushed) is still recorded as the proxy gave it.
  tracker.recordAck("a-1", "a.ns", TYPE_URL.route, "v0");
  assert.equal(tracker.report().proxies[0].acked.RDS?.version, "v0");
});
