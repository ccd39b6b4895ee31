import assert from "node:assert/strict";
import fc from "fast-check";
import type { JsonObject } from "@mesh/proto/struct_json";
import { TestAdsClient, testNode } from "./_test_ads_client.ts";
import { sidecarId, startTestServer } from "./_test_support.ts";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
/** Longest refusal detail these tests accept: a status trailer, not an echo of the request. */
const MAX_DETAILS = 1024;

/** The status a stream opened with `node` ends with, or "served" when it got a response. */
async function outcome(
  port: number,
  node: Record<string, unknown>,
): Promise<{ code: number; details: string } | "served"> {
  const client = TestAdsClient.sotw(port);
  try {
    client.send({ node, type_url: CDS });
    const ended = client.ended();
    const first = await Promise.race([client.next().then(() => "served" as const, () => ended), ended]);
    return first;
  } finally {
    client.close();
  }
}

Deno.test("A node refused for a megabyte-long id or value gets INVALID_ARGUMENT with a short excerpt of it", async (t) => {
  // Before: the refusal quoted the whole value; its 3 MB status did not fit the trailer, so the client saw only
  // "Call cancelled" (CANCELLED), and the server logged the 3 MB line.
  const server = await startTestServer();
  const long = "a".repeat(3_000_000);
  try {
    for (
      const [what, node, pattern] of [
        [
          "id",
          testNode(`sidecar~10.0.0.1~${long}~x`),
          /^Node id "sidecar~10\.0\.0\.1~a+"… has pod id "a+"… without a namespace/,
        ],
        [
          "INSTANCE_IPS",
          testNode(sidecarId("p"), { INSTANCE_IPS: long }),
          /INSTANCE_IPS has "a+"…: expected/,
        ],
        ["label key", testNode(sidecarId("p"), { LABELS: { [long]: [] } }), /LABELS\."a+"… is a list/],
        [
          "custom tag name",
          testNode(sidecarId("p"), { PROXY_CONFIG: { tracing: { customTags: { [long]: 1 } } } }),
          /customTags\."a+"… is number 1/,
        ],
      ] as const
    ) {
      await t.step(what, async () => {
        const status = await outcome(server.port, node);
        assert.ok(status !== "served");
        assert.equal(status.code, 3, `INVALID_ARGUMENT, got ${status.code} ${status.details.slice(0, 100)}`);
        assert.match(status.details, pattern);
        assert.ok(status.details.length <= MAX_DETAILS, `${status.details.length} characters of details`);
      });
    }
    assert.ok(server.logger.lines.every((line) => JSON.stringify(line).length < 4 * MAX_DETAILS));
  } finally {
    await server.close();
  }
});

const { json } = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string(),
    fc.array(tie("json"), { maxLength: 3 }),
    fc.dictionary(fc.string(), tie("json"), { maxKeys: 3 }),
  ),
}));
const KEYS = [
  "NAMESPACE",
  "LABELS",
  "CLUSTER_ID",
  "INTERCEPTION_MODE",
  "GENERATOR",
  "INSTANCE_IPS",
  "PROXY_CONFIG",
];

Deno.test("Streams whose nodes carry metadata of any shape are refused or served alone; a healthy proxy is served after", async () => {
  const server = await startTestServer();
  try {
    const metadata = fc.dictionary(fc.oneof(fc.constantFrom(...KEYS), fc.string()), json, { maxKeys: 4 });
    for (const meta of fc.sample(metadata, { numRuns: 30, seed: 7 })) {
      const status = await outcome(server.port, testNode(sidecarId("fuzz"), meta as JsonObject));
      if (status === "served") continue;
      assert.equal(
        status.code,
        3,
        `${status.code} ${status.details} for ${JSON.stringify(meta).slice(0, 200)}`,
      );
      assert.match(status.details, /^Node "sidecar~.*" metadata /);
      assert.ok(status.details.length <= MAX_DETAILS);
    }
    assert.equal(await outcome(server.port, testNode(sidecarId("healthy"))), "served");
  } finally {
    await server.close();
  }
});
