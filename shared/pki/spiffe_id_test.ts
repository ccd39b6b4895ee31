import assert from "node:assert/strict";
import { parseSpiffeId, parseSpiffeUri, spiffeId, SpiffeIdError, validateTrustDomain } from "./spiffe_id.ts";

Deno.test("spiffeId builds workload ids and parseSpiffeId reads them back", async (t) => {
  await t.step("round trip", () => {
    const id = spiffeId("cluster.local", "default", "bookinfo-reviews");
    assert.equal(id, "spiffe://cluster.local/ns/default/sa/bookinfo-reviews");
    assert.deepEqual(parseSpiffeId(id), {
      trustDomain: "cluster.local",
      namespace: "default",
      serviceAccount: "bookinfo-reviews",
    });
  });
  await t.step("empty or unsafe parts are refused when building", () => {
    assert.throws(() => spiffeId("cluster.local", "", "sa"), {
      name: "SpiffeIdError",
      message: /Invalid namespace ""/,
    });
    assert.throws(() => spiffeId("cluster.local", "ns", "a/b"), {
      message: /Invalid service account "a\/b"/,
    });
    assert.throws(() => spiffeId("Cluster.Local", "ns", "sa"), {
      message: /Invalid trust domain "Cluster.Local"/,
    });
  });
});

Deno.test("parseSpiffeId rejects ids that are not mesh workload ids", async (t) => {
  const bad: [string, RegExp][] = [
    ["https://cluster.local/ns/a/sa/b", /expected it to start with "spiffe:\/\/"/],
    [
      "spiffe://cluster.local/ns/a/sa",
      /expected "spiffe:\/\/<trust-domain>\/ns\/<namespace>\/sa\/<service-account>"/,
    ],
    ["spiffe://cluster.local/ns/a/sa/b/extra", /expected "spiffe:\/\/<trust-domain>/],
    ["spiffe://cluster.local/sa/a/ns/b", /expected "spiffe:\/\/<trust-domain>/],
    ["spiffe://cluster.local/ns//sa/b", /path segment 2 "" must be non-empty/],
    ["spiffe://cluster.local/ns/../sa/b", /path segment 2 "\.\."/],
    ["spiffe://cluster.local/ns/a/sa/b?x=1", /path segment 4 "b\?x=1"/],
    ["spiffe:///ns/a/sa/b", /Invalid trust domain "": must not be empty/],
    ["spiffe://UPPER/ns/a/sa/b", /only lower-case letters/],
    [`spiffe://td/${"a".repeat(2048)}`, /longer than 2048 bytes/],
  ];
  for (const [id, message] of bad) {
    await t.step(id.slice(0, 60), () => {
      assert.throws(() => parseSpiffeId(id), (error: unknown) => {
        assert.ok(error instanceof SpiffeIdError);
        assert.match(error.message, message);
        return true;
      });
    });
  }
});

Deno.test("parseSpiffeUri splits any SPIFFE id", () => {
  assert.deepEqual(parseSpiffeUri("spiffe://example.org"), { trustDomain: "example.org", segments: [] });
  assert.deepEqual(parseSpiffeUri("spiffe://example.org/billing/payments"), {
    trustDomain: "example.org",
    segments: ["billing", "payments"],
  });
  assert.throws(() => validateTrustDomain("a".repeat(256)), { message: /longer than 255 characters/ });
});
