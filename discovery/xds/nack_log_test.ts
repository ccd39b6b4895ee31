import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { TestAdsClient, testNode } from "./_test_ads_client.ts";
import { metricValue, sidecarId, startTestServer, waitFor } from "./_test_support.ts";
import { NACK_TEXT_LOGGED, NackLog } from "./nack_log.ts";

const CDS = TYPE_URL.cluster;

const nack = (error: string) => ({
  connection: "c-1",
  type: "CDS",
  nonce: "n",
  code: "InvalidArgument",
  error,
});

Deno.test("NackLog logs a proxy's first NACK, then at most one line per period saying how many it left out", () => {
  const logger = new RecordingLogger();
  let now = 0;
  const log = new NackLog(logger, { now: () => now, periodMs: 10_000 });
  const warned = () => logger.matching("warn", "rejected config");
  for (let i = 0; i < 100; i++) log.record("app.test", nack(`error ${i}`));
  log.record("other.test", nack("its own first"));
  assert.equal(warned().length, 2, "the first NACK of each proxy");
  assert.equal(warned()[0].fields?.error, "error 0");
  now = 9_999;
  log.record("app.test", nack("still within the period"));
  assert.equal(warned().length, 2);
  now = 10_000;
  log.record("app.test", nack("after the period"));
  assert.equal(warned().length, 3);
  assert.equal(warned()[2].fields?.error, "after the period");
  assert.equal(warned()[2].fields?.notLoggedSinceLastLine, 100);
  log.record("app.test", nack("left out"));
  log.forget("app.test");
  assert.equal(warned().length, 4);
  assert.equal(warned()[3].fields?.notLogged, 1, "what was left out is said when the proxy leaves");
  log.forget("other.test");
  assert.equal(warned().length, 4, "nothing was left out of the other");
  assert.equal(log.size, 0);
});

Deno.test("NackLog quotes a proxy's error text as a short escaped excerpt", () => {
  const logger = new RecordingLogger();
  const log = new NackLog(logger, { now: () => 0 });
  log.record("app.test", nack(`bad\nforged line "x"${"y".repeat(10_000)}`));
  const error = String(logger.matching("warn", "rejected config")[0].fields?.error);
  assert.ok(error.startsWith('bad\\nforged line \\"x\\"yyy'), error.slice(0, 40));
  assert.ok(!error.includes("\n"));
  assert.ok(error.length <= NACK_TEXT_LOGGED + 10, `${error.length} characters logged`);
  assert.ok(error.endsWith("…"));
});

Deno.test("ADS counts every NACK but logs a flood of them from one proxy once per period", async () => {
  let now = 0;
  const server = await startTestServer({ now: () => now });
  const client = TestAdsClient.sotw(server.port);
  try {
    client.send({ node: testNode(sidecarId("app")), type_url: CDS, resource_names: [] });
    const first = await client.next();
    const nackOf = (i: number) => ({
      type_url: CDS,
      response_nonce: first.nonce,
      error_detail: { code: 3, message: `cluster ${i}: ${"bad ".repeat(1_000)}` },
    });
    for (let i = 0; i < 200; i++) client.send(nackOf(i));
    await waitFor(
      async () => await metricValue(server.metrics, "discovery_total_xds_rejects", { type: "cds" }) === 200,
      "every NACK is counted",
    );
    const warned = () => server.logger.matching("warn", "rejected config");
    assert.equal(warned().length, 1, "one line for the first");
    assert.ok(String(warned()[0].fields?.error).length <= NACK_TEXT_LOGGED + 10);
    const sync = server.service.connections()[0].syncStatus()[CDS];
    assert.match(sync.lastNack?.message ?? "", /^cluster 199: /, "the latest NACK is on record");
    now = 10_000;
    client.send(nackOf(200));
    await waitFor(
      async () => await metricValue(server.metrics, "discovery_total_xds_rejects", { type: "cds" }) === 201,
      "the NACK after the period is counted",
    );
    assert.equal(warned().length, 2);
    assert.equal(warned()[1].fields?.notLoggedSinceLastLine, 199);
  } finally {
    client.close();
    await server.close();
  }
});
