import "reflect-metadata";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { EnvSettings } from "@mesh/shared/env/env_settings";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { AdsServer } from "./ads_server.ts";
import { startXdsServer } from "./xds_grpc_server.ts";
import { DEFAULT_XDS_SETTINGS } from "./xds_settings.ts";
import { xdsAdmissionFromEnv } from "./xds_admission.ts";
import { TestAdsClient, testNode } from "./_test_ads_client.ts";
import { metricValue, testGenerators, type TestPush, testPush } from "./_test_support.ts";

const KEEPALIVE = { intervalMs: 30_000, timeoutMs: 10_000, maxConnectionAgeNs: 9_223_372_036_854_775_807n };

Deno.test("xdsAdmissionFromEnv reads DISCOVERY_XDS_MAX_* and DISCOVERY_XDS_CONNECTION_RATE_PER_PEER, and refuses a bound below 1 by name", () => {
  assert.deepEqual(xdsAdmissionFromEnv(new EnvSettings("discovery", {})).limits, {
    maxConnections: 20_000,
    maxConnectionsPerPeer: 256,
    maxStreams: 20_000,
    maxStreamsPerPeer: 512,
    connectionRatePerPeer: 256,
  });
  assert.throws(
    () => xdsAdmissionFromEnv(new EnvSettings("discovery", { DISCOVERY_XDS_MAX_STREAMS_PER_PEER: "0" })),
    /DISCOVERY_XDS_MAX_STREAMS_PER_PEER="0" is out of range: expected a value from 1/,
  );
});

Deno.test("an ADS stream past DISCOVERY_XDS_MAX_STREAMS_PER_PEER ends with RESOURCE_EXHAUSTED, counted", async () => {
  const metrics = new Metrics("discovery", { version: "test", tag: "test" });
  const logger = new RecordingLogger();
  const service = new AdsServer<TestPush>({
    generators: testGenerators(),
    settings: DEFAULT_XDS_SETTINGS,
    logger,
    metrics,
    initialPush: testPush("v1"),
  });
  const server = await startXdsServer({
    addr: { hostname: "127.0.0.1", port: 0 },
    service,
    keepalive: KEEPALIVE,
    logger,
    admission: xdsAdmissionFromEnv(new EnvSettings("discovery", { DISCOVERY_XDS_MAX_STREAMS_PER_PEER: "1" })),
  });
  const first = TestAdsClient.sotw(server.port);
  let second: TestAdsClient | undefined;
  try {
    first.send({
      node: testNode("sidecar~10.0.0.1~a.default~default.svc.cluster.local"),
      type_url: TYPE_URL.cluster,
    });
    await first.next();
    second = TestAdsClient.sotw(server.port);
    let refused: { code: number; details: string } | undefined;
    second.ended().then((status) => refused = status);
    await waitFor(() => refused !== undefined, "the second stream to end");
    assert.equal(refused!.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.match(refused!.details, /DISCOVERY_XDS_MAX_STREAMS_PER_PEER=1/);
    assert.equal(
      await metricValue(metrics, "discovery_xds_rejected_streams", { reason: "peer_stream_limit" }),
      1,
    );
    assert.equal(logger.matching("warn", "refused a stream").length, 1);
  } finally {
    first.close();
    second?.close();
    await server.close();
  }
});
