import assert from "node:assert/strict";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { StalledH2Client } from "@mesh/shared/grpc/_stalled_h2_client";
import { TestAdsClient, testNode } from "./_test_ads_client.ts";
import {
  metricValue,
  sidecarId,
  startTestServer,
  testPush,
  type TestServer,
  waitFor,
} from "./_test_support.ts";
import { ADS_SERVICE_DEFINITION } from "@mesh/proto/ads_service";

const CDS = TYPE_URL.cluster;
/** Far beyond the 65,535-byte window a stalled client grants, so its write cannot finish. */
const BIG = 1_000_000;

const requestType = loadEnvoySchema().lookupType("envoy.service.discovery.v3.DiscoveryRequest");

/** Opens a CDS watch from a client that then stops reading, and waits for its (small) first response. */
async function stalledProxy(
  server: TestServer,
  pod: string,
  options: { wideWindow?: boolean } = {},
): Promise<StalledH2Client> {
  const request = requestType.encode(
    requestType.fromObject({ node: testNode(sidecarId(pod)), type_url: CDS }),
  ).finish();
  const client = await StalledH2Client.open(
    server.port,
    ADS_SERVICE_DEFINITION.StreamAggregatedResources.path,
    request,
    options,
  );
  await waitFor(() => client.dataBytes > 0, `the first response to ${pod}`);
  return client;
}

function pushedTo(server: TestServer, pod: string): boolean {
  return server.service.connections().some((c) => c.proxy.id === `${pod}.test`);
}

/** Sends to `pod` written and not yet taken by it. */
function sendsTo(server: TestServer, pod: string): number {
  return server.service.connections().filter((c) => c.proxy.id === `${pod}.test`)
    .reduce((sum, c) => sum + c.sendsInProgress, 0);
}

const idle = (server: TestServer) => {
  const { pending, inFlight } = server.service.queueStats();
  return pending === 0 && inFlight === 0;
};

Deno.test("A proxy that stops reading does not hold up pushes to the others", async () => {
  const server = await startTestServer({ settings: { sendTimeoutMs: 60_000 } });
  const stalled = await stalledProxy(server, "stalled");
  const healthy = TestAdsClient.sotw(server.port);
  try {
    healthy.send({ node: testNode(sidecarId("healthy")), type_url: CDS });
    await healthy.next();
    server.push(testPush("v2", { clusters: { a: BIG, b: 0 } }));
    const update = await healthy.next();
    assert.equal(update.version, "v2");
    assert.ok(update.bytes > BIG);
    await waitFor(() => sendsTo(server, "healthy") === 0, "the healthy proxy's send to finish");
    assert.ok(pushedTo(server, "stalled"), "the stalled proxy is still connected");
    assert.equal(sendsTo(server, "stalled"), 1, "its send is still waiting");
    assert.equal(server.service.queueStats().inFlight, 1, "and holds its push slot");
    assert.equal(await metricValue(server.metrics, "discovery_xds_write_timeout"), 0);
    await stalled.close();
    await waitFor(() => !pushedTo(server, "stalled") && idle(server), "the stalled push to be released");
  } finally {
    healthy.close();
    await stalled.close();
    await server.close();
  }
});

Deno.test("A proxy that granted a wide window and stopped reading holds its push slot until its bytes leave", async () => {
  const server = await startTestServer({ settings: { sendTimeoutMs: 60_000, pushThrottle: 2 } });
  const stalled = await stalledProxy(server, "stalled", { wideWindow: true });
  // Far beyond what loopback socket buffers hold, so most of it must wait in the server.
  const huge = 64_000_000;
  try {
    stalled.pauseReading();
    server.push(testPush("v2", { clusters: { a: huge, b: 0 } }));
    await waitFor(() => sendsTo(server, "stalled") === 1, "the send to start");
    // Probe requests on another connection, each answered in full only after the server has turned its event
    // loop many times: with the window open, the transport has taken all it will of the stalled response, and
    // only the socket holds the bytes back.
    for (let i = 0; i < 5; i++) {
      const probe = TestAdsClient.sotw(server.port);
      try {
        probe.send({ node: testNode(sidecarId(`probe-${i}`)), type_url: TYPE_URL.listener });
        await probe.next();
      } finally {
        probe.close();
      }
    }
    assert.equal(sendsTo(server, "stalled"), 1, "the send waits for the socket, not just the HTTP/2 window");
    assert.equal(server.service.queueStats().inFlight, 1, "and keeps its push slot");
    stalled.resumeReading();
    await waitFor(() => sendsTo(server, "stalled") === 0 && idle(server), "the send to finish once read");
    // The send ends when the server's socket has written the bytes; the last of them may still be on their
    // way through the client's socket and HTTP/2 session.
    await waitFor(() => stalled.dataBytes > huge, "the client to get the whole response");
  } finally {
    await stalled.close();
    await server.close();
  }
});

Deno.test("A send not done within DISCOVERY_XDS_SEND_TIMEOUT is abandoned, counted and its stream ended", async () => {
  const server = await startTestServer({ settings: { sendTimeoutMs: 200 } });
  const stalled = await stalledProxy(server, "stalled");
  try {
    server.push(testPush("v2", { clusters: { a: BIG, b: 0 } }));
    await waitFor(() => !pushedTo(server, "stalled"), "the stalled stream to be dropped");
    assert.equal(await metricValue(server.metrics, "discovery_xds_write_timeout"), 1);
    assert.equal(await metricValue(server.metrics, "discovery_xds_pushes", { type: "cds_senderr" }), 1);
    assert.equal(await metricValue(server.metrics, "discovery_xds"), 0);
    await waitFor(() => idle(server), "the push slot to be released");
    assert.ok(stalled.dataBytes < BIG, "the client never got the whole response");
    assert.equal(stalled.streamEnded, false, "the end of the stream waits behind the unsent data");
    await stalled.resume();
    await waitFor(() => stalled.streamEnded, "the stream to end once the client reads again");
  } finally {
    await stalled.close();
    await server.close();
  }
});

Deno.test("At most DISCOVERY_PUSH_THROTTLE pushes are in flight", async (t) => {
  for (const throttle of [1, 2]) {
    await t.step(`with a throttle of ${throttle}`, async () => {
      const server = await startTestServer({ settings: { sendTimeoutMs: 60_000, pushThrottle: throttle } });
      const first = await stalledProxy(server, "first");
      const second = await stalledProxy(server, "second");
      try {
        server.push(testPush("v2", { clusters: { a: BIG, b: 0 } }));
        await waitFor(
          () => server.service.queueStats().inFlight === throttle,
          `${throttle} pushes in flight`,
        );
        assert.deepEqual(server.service.queueStats(), { inFlight: throttle, pending: 2 - throttle });
        // Releasing one stuck push lets the waiting one (if any) start.
        await first.close();
        await waitFor(() => !pushedTo(server, "first"), "the first proxy to go");
        await waitFor(
          () => {
            const { inFlight, pending } = server.service.queueStats();
            return inFlight === 1 && pending === 0;
          },
          "the second proxy's push to run",
        );
        await second.close();
        await waitFor(() => idle(server), "every push to finish");
      } finally {
        await first.close();
        await second.close();
        await server.close();
      }
    });
  }
});

Deno.test("Answers to new watches wait for DISCOVERY_PUSH_THROTTLE like pushes, so a connect storm is bounded", async () => {
  const server = await startTestServer({ settings: { sendTimeoutMs: 60_000, pushThrottle: 1 } });
  const stalled = await stalledProxy(server, "stalled");
  const newcomer = TestAdsClient.sotw(server.port);
  try {
    server.push(testPush("v2", { clusters: { a: BIG, b: 0 } }));
    await waitFor(() => sendsTo(server, "stalled") === 1, "the stalled proxy's push to hold the only permit");
    newcomer.send({ node: testNode(sidecarId("newcomer")), type_url: CDS });
    await waitFor(
      () => server.service.gateStats().waiting === 1,
      "the newcomer's answer to wait for a permit",
    );
    assert.deepEqual(server.service.gateStats(), { running: 1, waiting: 1 });
    await stalled.close();
    const answer = await newcomer.next();
    assert.equal(answer.version, "v2");
    await waitFor(() => server.service.gateStats().running === 0, "the permit to be returned");
  } finally {
    newcomer.close();
    await stalled.close();
    await server.close();
  }
});

Deno.test("The streams of one connection that stopped reading hold one response permit between them", async () => {
  const server = await startTestServer({
    settings: { sendTimeoutMs: 60_000, pushThrottle: 2 },
    push: testPush("v1", { clusters: { a: BIG, b: 0 } }),
  });
  const request = (pod: string) =>
    requestType.encode(requestType.fromObject({ node: testNode(sidecarId(pod)), type_url: CDS })).finish();
  // Two proxies on one connection that grants only its first 64 KiB: neither first response can leave.
  const stalled = await StalledH2Client.open(
    server.port,
    ADS_SERVICE_DEFINITION.StreamAggregatedResources.path,
    request("stalled-0"),
  );
  const healthy = TestAdsClient.sotw(server.port);
  try {
    await stalled.openStream(request("stalled-1"));
    await waitFor(
      () => pushedTo(server, "stalled-0") && pushedTo(server, "stalled-1"),
      "both stalled proxies admitted",
    );
    healthy.send({ node: testNode(sidecarId("healthy")), type_url: CDS });
    const answer = await healthy.next();
    assert.equal(answer.version, "v1");
    assert.ok(answer.bytes > BIG);
    await waitFor(() => sendsTo(server, "healthy") === 0, "the healthy proxy's send to finish");
    assert.equal(sendsTo(server, "stalled-0") + sendsTo(server, "stalled-1"), 1, "one stalled send waits");
    assert.deepEqual(server.service.gateStats(), { running: 1, waiting: 0 });
  } finally {
    healthy.close();
    await stalled.close();
    await server.close();
  }
});
