import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { TestAdsClient, testNode, type TestStatus } from "./_test_ads_client.ts";
import { metricValue, sidecarId, startTestServer, type TestServer, waitFor } from "./_test_support.ts";
import { NameBudgets, NameLimitError } from "./name_budget.ts";
import * as grpc from "@grpc/grpc-js";

const CDS = TYPE_URL.cluster, EDS = TYPE_URL.endpoint;

/** Small limits, so a test reaches them with a handful of names. */
const LIMITS = { maxNameLength: 100, maxNamesPerStream: 10, maxNameCharsPerConnection: 300 };

/** The NameLimitError `refused` throws. */
function refusal(refused: () => unknown): NameLimitError {
  try {
    refused();
  } catch (error) {
    if (error instanceof NameLimitError) return error;
    throw error;
  }
  throw new assert.AssertionError({ message: "Expected a NameLimitError" });
}

const names = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

/** Checks that the stream ends, answering nothing more, with `code` and `details`. */
async function assertRefused(client: TestAdsClient, code: number, details: RegExp): Promise<TestStatus> {
  const answered = await client.next().then((r) => r.typeUrl, () => undefined);
  assert.equal(answered, undefined, `the stream answered a "${answered}" request instead of ending`);
  const status = await client.ended();
  assert.equal(status.code, code, `status ${status.code}: ${status.details}`);
  assert.match(status.details, details);
  return status;
}

async function withServer(run: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startTestServer({ settings: LIMITS });
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

Deno.test("NameBudgets counts each stream's names and each connection's characters, and releases them", () => {
  const budgets = new NameBudgets(LIMITS);
  const a = budgets.open("10.0.0.1:1000");
  const b = budgets.open("10.0.0.1:1000");
  a.add(9, 170, EDS);
  const many = refusal(() => a.add(2, 2, EDS));
  assert.equal(many.code, grpc.status.RESOURCE_EXHAUSTED);
  assert.match(
    many.message,
    /11 names on this stream, over the limit of 10 \(DISCOVERY_XDS_MAX_NAMES_PER_STREAM\)/,
  );
  assert.equal(a.names, 9, "a refused addition records nothing");
  const chars = refusal(() => b.add(1, 131, EDS));
  assert.match(
    chars.message,
    /301 characters .* limit of 300 \(DISCOVERY_XDS_MAX_NAME_CHARS_PER_CONNECTION\)/,
  );
  b.add(1, 130, EDS);
  assert.equal(budgets.charsOf("10.0.0.1:1000"), 300);
  a.add(-9, -170, EDS);
  b.add(1, 100, EDS);
  a.close();
  b.close();
  b.close();
  assert.equal(budgets.charsOf("10.0.0.1:1000"), 0);
  assert.equal(budgets.transports, 0, "a connection without streams is forgotten");
  const long = refusal(() => budgets.open("x").checkName("n".repeat(101), "resource name", EDS));
  assert.equal(long.code, grpc.status.INVALID_ARGUMENT);
  assert.match(long.message, /101 characters .* limit of 100 \(DISCOVERY_XDS_MAX_NAME_LENGTH\)/);
  assert.throws(() => new NameBudgets({ ...LIMITS, maxNamesPerStream: 0 }), RangeError);
});

Deno.test("ADS refuses a delta subscription of a name over the length limit", async () => {
  await withServer(async (server) => {
    const client = TestAdsClient.delta(server.port);
    try {
      client.send({
        node: testNode(sidecarId("app")),
        type_url: EDS,
        resource_names_subscribe: ["a", "x".repeat(101)],
      });
      await assertRefused(
        client,
        grpc.status.INVALID_ARGUMENT,
        /resource name of 101 characters .* limit of 100 \(DISCOVERY_XDS_MAX_NAME_LENGTH\)/,
      );
      assert.equal(
        await metricValue(server.metrics, "discovery_xds_refused_streams", { code: "InvalidArgument" }),
        1,
      );
      assert.equal(server.service.memoStats().memos.names.entries, 0, "the long name was not kept");
    } finally {
      client.close();
    }
  });
});

Deno.test("ADS refuses a delta stream that subscribes past its name budget, request by request", async () => {
  await withServer(async (server) => {
    const client = TestAdsClient.delta(server.port);
    try {
      client.send({
        node: testNode(sidecarId("app")),
        type_url: EDS,
        resource_names_subscribe: names("n", 5),
      });
      const first = await client.next();
      // The watch holds its type URL and five names: four more fit, five do not.
      client.send({ type_url: EDS, response_nonce: first.nonce, resource_names_subscribe: names("m", 4) });
      await client.next();
      client.send({ type_url: EDS, resource_names_subscribe: ["last"] });
      await assertRefused(
        client,
        grpc.status.RESOURCE_EXHAUSTED,
        /11 names on this stream, over the limit of 10 \(DISCOVERY_XDS_MAX_NAMES_PER_STREAM\)/,
      );
    } finally {
      client.close();
    }
  });
});

Deno.test("ADS counts a delta stream's initial_resource_versions against its name budget", async () => {
  await withServer(async (server) => {
    const client = TestAdsClient.delta(server.port);
    try {
      client.send({
        node: testNode(sidecarId("app")),
        type_url: CDS,
        initial_resource_versions: Object.fromEntries(names("c", 10).map((n) => [n, "v1"])),
      });
      await assertRefused(client, grpc.status.RESOURCE_EXHAUSTED, /DISCOVERY_XDS_MAX_NAMES_PER_STREAM/);
    } finally {
      client.close();
    }
    const long = TestAdsClient.delta(server.port);
    try {
      long.send({
        node: testNode(sidecarId("app")),
        type_url: CDS,
        initial_resource_versions: { a: "v".repeat(101) },
      });
      await assertRefused(long, grpc.status.INVALID_ARGUMENT, /resource version of 101 characters/);
    } finally {
      long.close();
    }
  });
});

Deno.test("ADS refuses state-of-the-world resource_names over the limits", async () => {
  await withServer(async (server) => {
    const many = TestAdsClient.sotw(server.port);
    const long = TestAdsClient.sotw(server.port);
    try {
      many.send({ node: testNode(sidecarId("app")), type_url: EDS, resource_names: names("n", 10) });
      await assertRefused(many, grpc.status.RESOURCE_EXHAUSTED, /DISCOVERY_XDS_MAX_NAMES_PER_STREAM/);
      long.send({ node: testNode(sidecarId("app")), type_url: EDS, resource_names: ["x".repeat(101)] });
      await assertRefused(long, grpc.status.INVALID_ARGUMENT, /DISCOVERY_XDS_MAX_NAME_LENGTH/);
    } finally {
      many.close();
      long.close();
    }
  });
});

Deno.test("ADS bounds the characters of names the streams of one connection hold together", async () => {
  await withServer(async (server) => {
    // grpc-js clients of one address share their HTTP/2 connection.
    const first = TestAdsClient.delta(server.port);
    const second = TestAdsClient.delta(server.port);
    const third = TestAdsClient.delta(server.port);
    try {
      const fifty = (c: string) => [`${c}`.repeat(50)];
      first.send({ node: testNode(sidecarId("a")), type_url: EDS, resource_names_subscribe: fifty("a") });
      await first.next();
      second.send({ node: testNode(sidecarId("b")), type_url: EDS, resource_names_subscribe: fifty("b") });
      await second.next();
      const [a, b] = server.service.connections();
      assert.equal(a.peer, b.peer, "both streams are on one connection");
      // Each stream holds its type URL (66 characters) and a name of 50: 232 of 300 characters.
      third.send({ node: testNode(sidecarId("c")), type_url: EDS, resource_names_subscribe: fifty("c") });
      await assertRefused(
        third,
        grpc.status.RESOURCE_EXHAUSTED,
        /characters of names on this connection's streams, over the limit of 300 \(DISCOVERY_XDS_MAX_NAME_CHARS_PER_CONNECTION\)/,
      );
      first.close();
      await waitFor(() => server.service.connections().length === 1, "the first stream is gone");
      const fourth = TestAdsClient.delta(server.port);
      try {
        fourth.send({ node: testNode(sidecarId("d")), type_url: EDS, resource_names_subscribe: fifty("d") });
        const answer = await fourth.next();
        assert.equal(answer.typeUrl, EDS, "what a closed stream held is free again");
      } finally {
        fourth.close();
      }
    } finally {
      first.close();
      second.close();
      third.close();
    }
  });
});

Deno.test("ADS drops its name memos when the last stream ends", async () => {
  await withServer(async (server) => {
    const client = TestAdsClient.sotw(server.port);
    client.send({ node: testNode(sidecarId("app")), type_url: EDS, resource_names: ["a", "b"] });
    await client.next();
    const held = server.service.memoStats().memos;
    assert.equal(held.names.entries, 2);
    assert.equal(held.nameLists.entries, 1);
    assert.ok(held.names.bytes > 0 && held.names.bytes <= held.names.maxBytes);
    client.close();
    await waitFor(() => server.service.memoStats().openStreams === 0, "the stream ended");
    const after = server.service.memoStats().memos;
    assert.deepEqual([after.names.entries, after.names.bytes], [0, 0]);
    assert.deepEqual([after.nameLists.entries, after.nameLists.bytes], [0, 0]);
  });
});

Deno.test("ADS drops the name memos of streams gone once half of its streams have ended", async () => {
  await withServer(async (server) => {
    const clients = ["a", "b", "c", "d"].map((who) => {
      const client = TestAdsClient.sotw(server.port);
      client.send({ node: testNode(sidecarId(who)), type_url: EDS, resource_names: [`${who}1`, `${who}2`] });
      return client;
    });
    const [a, b, c, d] = clients;
    try {
      await Promise.all(clients.map((client) => client.next()));
      assert.equal(server.service.memoStats().memos.nameLists.entries, 4);
      c.close();
      await waitFor(() => server.service.memoStats().openStreams === 3, "one stream ended");
      assert.equal(server.service.memoStats().memos.nameLists.entries, 4, "three of four streams are left");
      d.close();
      await waitFor(() => server.service.memoStats().openStreams === 2, "half of the streams ended");
      const after = server.service.memoStats().memos;
      assert.deepEqual([after.names.entries, after.nameLists.entries], [0, 0]);
      // A stream left finds its list again at its next request.
      a.send({ node: testNode(sidecarId("a")), type_url: EDS, resource_names: ["a1", "a2"] });
      await waitFor(() => server.service.memoStats().memos.nameLists.entries === 1, "a's list kept again");
      assert.equal(server.service.memoStats().memos.names.entries, 2);
    } finally {
      a.close();
      b.close();
      c.close();
      d.close();
    }
  });
});
