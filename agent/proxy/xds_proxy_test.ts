import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { ADS_SERVICE_DEFINITION } from "@mesh/proto/ads_service";
import { frameDiscoveryResponse } from "@mesh/proto/discovery_frame";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { startGrpcServer } from "@mesh/shared/grpc/grpc_server";
import { type Logger, silentLogger } from "@mesh/shared/log/logger";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { MAX_REPLAYED_TYPES, startXdsProxy, UPSTREAM_BACKOFF_MS, upstreamRetryDelayMs } from "./xds_proxy.ts";
import { Metrics } from "@mesh/shared/metrics/metrics";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { StalledH2Client } from "@mesh/shared/grpc/_stalled_h2_client";

/** The value of counter `name` for `labels` (all of its series summed when none are given). */
async function counted(metrics: Metrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await metrics.counter(name).get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((sum, v) => sum + v.value, 0);
}

const requestType = loadEnvoySchema().lookupType("envoy.service.discovery.v3.DiscoveryRequest");

/** A discovery server on `listen` whose ADS streams `onStream` serves; delta streams end at once. */
async function adsUpstream(
  onStream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => void,
  listen = "127.0.0.1:0",
) {
  return await startGrpcServer({
    name: "Upstream",
    listen: { tcp: listen, flag: "--testAddr" },
    logger: silentLogger,
    services: [{
      definition: ADS_SERVICE_DEFINITION,
      implementation: {
        StreamAggregatedResources: onStream,
        DeltaAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => call.end(),
      } as never,
    }],
  });
}

/** A discovery server that answers every request with `response`. */
async function fixedAdsServer(response: Uint8Array) {
  return await adsUpstream(
    (call) => {
      call.on("data", () => call.write(Buffer.from(response)));
      call.on("end", () => call.end());
    },
  );
}

/**
 * The relay in front of `upstream` on a socket in a temp dir, logging to `log` (other options from
 * `overrides`), with a client of that socket;
 * `close` ends all three and removes the dir.
 */
async function relayTo(
  upstream: string,
  log: Logger = silentLogger,
  overrides: Partial<Parameters<typeof startXdsProxy>[0]> = {},
) {
  const dir = await Deno.makeTempDir({ prefix: "xds_proxy_test_" });
  const proxy = await startXdsProxy({
    socket: `${dir}/xds.sock`,
    upstream: { address: upstream, mutualTls: false, serverName: "unused" },
    secrets: { current: undefined, onChange: () => () => {} },
    log,
    maxReceiveMessageBytes: 16 * 1024 * 1024,
    ...overrides,
  });
  const Client = grpc.makeClientConstructor(ADS_SERVICE_DEFINITION, "AggregatedDiscoveryService");
  const client = new Client(`unix:${dir}/xds.sock`, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": -1,
  });
  return {
    /** Opens an ADS stream through the relay. */
    stream(): grpc.ClientDuplexStream<Buffer, Buffer> {
      // deno-lint-ignore no-explicit-any
      return (client as any).StreamAggregatedResources() as grpc.ClientDuplexStream<Buffer, Buffer>;
    },
    async close() {
      client.close();
      await proxy.close(0);
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("The xDS proxy relays a response of megabytes to the proxy byte for byte", async () => {
  // Several 64 KiB slices' worth, so the relay's own sending is sliced.
  const resource = new Uint8Array(1_500_000).map((_, i) => (i * 7) % 256);
  const response = frameDiscoveryResponse({
    version_info: "v1",
    resources: [resource],
    type_url: TYPE_URL.cluster,
    nonce: "n1",
  });
  const upstream = await fixedAdsServer(response);
  const relay = await relayTo(upstream.address);
  try {
    const call = relay.stream();
    call.on("error", () => {});
    const received = new Promise<Uint8Array>((resolve) => call.once("data", (b: Buffer) => resolve(b)));
    call.write(
      Buffer.from(requestType.encode(requestType.fromObject({ type_url: TYPE_URL.cluster })).finish()),
    );
    assert.deepEqual(new Uint8Array(await received), new Uint8Array(response));
    call.cancel();
  } finally {
    await relay.close();
    await upstream.close(0);
  }
});

Deno.test("The xDS proxy ends the stream of a proxy that does not read a response within the send timeout", async () => {
  const response = frameDiscoveryResponse({
    version_info: "v1",
    resources: [new Uint8Array(256 * 1024).fill(3)],
    type_url: TYPE_URL.cluster,
    nonce: "n1",
  });
  const upstream = await fixedAdsServer(response);
  const dir = await Deno.makeTempDir({ prefix: "xds_proxy_test_" });
  const clock = FakeTimers.createClock();
  const proxy = await startXdsProxy({
    socket: `${dir}/xds.sock`,
    upstream: { address: upstream.address, mutualTls: false, serverName: "unused" },
    secrets: { current: undefined, onChange: () => () => {} },
    log: silentLogger,
    maxReceiveMessageBytes: 16 * 1024 * 1024,
    sendTimeoutMs: 1_000,
    timers: timersOf(clock),
  });
  // A proxy that takes HTTP/2's first window of the response and then grants no more credit.
  const stalled = await StalledH2Client.open(
    { unix: `${dir}/xds.sock` },
    ADS_SERVICE_DEFINITION.StreamAggregatedResources.path,
    requestType.encode(requestType.fromObject({ type_url: TYPE_URL.cluster })).finish(),
  );
  try {
    await waitFor(
      () => stalled.dataBytes >= 60_000 && clock.countTimers() === 1,
      "the send waiting on the proxy",
    );
    clock.tick(1_000);
    // The ending status waits behind the message: the proxy sees it once it reads again.
    await stalled.resume();
    await waitFor(() => stalled.streamEnded, "the proxy's stream ended");
    assert.ok(stalled.dataBytes >= response.length, "the message went out whole before the status");
  } finally {
    await stalled.close();
    await proxy.close(0);
    await upstream.close(0);
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * A discovery server on `listen` that answers each request but its own acknowledgements and rejections (as
 * the discovery server does) with a cluster response of `version`; the requests go to `requests`.
 */
async function versionedAdsServer(listen: string, version: string, requests: Record<string, unknown>[] = []) {
  return await adsUpstream(
    (call) => {
      call.on("data", (data: Buffer) => {
        const request = requestType.toObject(requestType.decode(data)) as {
          response_nonce?: string;
          error_detail?: unknown;
        };
        requests.push(request);
        if (request.response_nonce?.startsWith(version) || request.error_detail !== undefined) return;
        call.write(Buffer.from(frameDiscoveryResponse({
          version_info: version,
          resources: [],
          type_url: TYPE_URL.cluster,
          nonce: `${version}-nonce`,
        })));
      });
      call.on("error", () => {});
      call.on("end", () => call.end());
    },
    listen,
  );
}

/**
 * A proxy on the relay subscribes, answers each response as `answer` says, and sees the discovery server
 * restart: its stream stays open, it gets the new server's configuration, and the new server gets the proxy's
 * subscription as it stood, as `replayedFirst`.
 */
async function acrossRestart(answer: "ack" | "nack", replayedFirst: Record<string, unknown>) {
  let upstream = await versionedAdsServer("127.0.0.1:0", "first");
  const address = upstream.address;
  const log = new RecordingLogger();
  const metrics = new Metrics("agent", { version: "test", tag: "test" });
  const relay = await relayTo(address, log, { metrics });
  const responseType = loadEnvoySchema().lookupType("envoy.service.discovery.v3.DiscoveryResponse");
  try {
    const call = relay.stream();
    const versions: string[] = [];
    const failures: unknown[] = [];
    call.on("error", (error) => failures.push(error));
    call.on("end", () => failures.push("end"));
    call.on("data", (data: Buffer) => {
      const response = responseType.toObject(responseType.decode(data)) as {
        version_info: string;
        nonce: string;
      };
      versions.push(response.version_info);
      call.write(Buffer.from(
        requestType.encode(requestType.fromObject({
          type_url: TYPE_URL.cluster,
          response_nonce: response.nonce,
          resource_names: ["outbound|80||a.default.svc.cluster.local"],
          ...(answer === "ack"
            ? { version_info: response.version_info }
            : { error_detail: { code: 3, message: "Invalid cluster" } }),
        })).finish(),
      ));
    });
    call.write(Buffer.from(
      requestType.encode(requestType.fromObject({
        type_url: TYPE_URL.cluster,
        node: { id: "sidecar~10.0.0.1~a.default~default.svc.cluster.local" },
        resource_names: ["outbound|80||a.default.svc.cluster.local"],
      })).finish(),
    ));
    await waitFor(() => versions.includes("first"), "the first server's configuration");

    await upstream.close(0);
    const replayed: Record<string, unknown>[] = [];
    upstream = await versionedAdsServer(address, "second", replayed);
    await waitFor(() => versions.includes("second"), "the restarted server's configuration", 20_000);
    assert.deepEqual(failures, []);
    assert.deepEqual(versions, ["first", "second"]);
    assert.deepEqual(replayed[0], replayedFirst);
    const back = log.matching("info", "upstream ADS stream back");
    assert.equal(back.length, 1);
    assert.ok((back[0].fields?.attempts as number) >= 1);

    // The relay's metrics move with what they count.
    assert.equal(await counted(metrics, "xds_proxy_responses"), 2, "one response from each server");
    await waitFor(
      async () => await counted(metrics, "xds_proxy_requests") === 3,
      "the subscription and one answer to each response, counted",
    );
    assert.equal(
      await counted(metrics, "meshd_connection_terminations"),
      1,
      "the first server's stream ended",
    );
    const reconnects = await counted(metrics, "xds_proxy_upstream_reconnects", { reason: "upstream_lost" });
    assert.equal(
      reconnects,
      await counted(metrics, "meshd_connection_failures") + 1,
      "every attempt while the server was down failed before an answer, and the last one held",
    );
    call.cancel();
    await waitFor(
      async () => await counted(metrics, "envoy_connection_terminations", { type: "cancelled" }) === 1,
      "the proxy's cancelled stream counted",
    );
  } finally {
    await relay.close();
    await upstream.close(0);
  }
}

Deno.test("The xDS proxy keeps the proxy's stream open across a discovery server restart and replays its subscription", async () => {
  // As Envoy asks on a new stream: the version it holds, with the node, without the old server's nonce.
  await acrossRestart("ack", {
    type_url: TYPE_URL.cluster,
    node: { id: "sidecar~10.0.0.1~a.default~default.svc.cluster.local" },
    resource_names: ["outbound|80||a.default.svc.cluster.local"],
    version_info: "first",
  });
});

Deno.test("The xDS proxy replays a subscription the proxy last answered with a rejection as a plain request", async () => {
  // A replayed rejection would be recorded by the new server and left unanswered.
  await acrossRestart("nack", {
    type_url: TYPE_URL.cluster,
    node: { id: "sidecar~10.0.0.1~a.default~default.svc.cluster.local" },
    resource_names: ["outbound|80||a.default.svc.cluster.local"],
  });
});

Deno.test("The xDS proxy's upstream backoff doubles within its jitter and stops at its cap", () => {
  const { first, max, jitter } = UPSTREAM_BACKOFF_MS;
  assert.ok(first >= 100 && first <= 1_000 && max <= 15_000);
  assert.equal(upstreamRetryDelayMs(1, () => 0.5), first);
  assert.equal(upstreamRetryDelayMs(1, () => 0), Math.round(first * (1 - jitter)));
  assert.ok(upstreamRetryDelayMs(1, () => 0.999) > first);
  assert.equal(upstreamRetryDelayMs(3, () => 0.5), first * 4);
  for (const attempt of [10, 50, 10_000]) {
    assert.ok(upstreamRetryDelayMs(attempt, () => 0.999) <= max);
    assert.ok(upstreamRetryDelayMs(attempt, () => 0) >= max * (1 - jitter));
  }
});

Deno.test("The xDS proxy keeps at most MAX_REPLAYED_TYPES types of a proxy's requests for replay, and relays the rest", async () => {
  const streams: string[][] = [];
  const upstream = await adsUpstream(
    (call) => {
      const types: string[] = [];
      streams.push(types);
      call.on(
        "data",
        (data: Buffer) => types.push((requestType.decode(data) as { type_url?: string }).type_url!),
      );
      call.on("error", () => {});
      call.on("end", () => call.end());
    },
  );
  const listeners = new Set<() => void>();
  const log = new RecordingLogger();
  const relay = await relayTo(upstream.address, log, {
    secrets: {
      current: undefined,
      onChange: (listener) => {
        listeners.add(listener as () => void);
        return () => listeners.delete(listener as () => void);
      },
    },
  });
  try {
    const call = relay.stream();
    call.on("error", () => {});
    const types = Array.from({ length: MAX_REPLAYED_TYPES + 100 }, (_, i) => `type.example/T${i}`);
    for (const type_url of types) {
      call.write(Buffer.from(requestType.encode(requestType.fromObject({ type_url })).finish()));
    }
    await waitFor(() => streams[0]?.length === types.length, "every request relayed");
    // A new workload certificate: the relay opens a new upstream stream and replays what it kept.
    for (const listener of listeners) listener();
    await waitFor(() => streams[1]?.length === MAX_REPLAYED_TYPES, "the replay");
    assert.deepEqual(streams[1], types.slice(0, MAX_REPLAYED_TYPES));
    assert.equal(log.matching("warn", "more types than a stream keeps").length, 1, "logged once a period");
    call.cancel();
  } finally {
    await relay.close();
    await upstream.close(0);
  }
});

Deno.test("The xDS proxy ends, with RESOURCE_EXHAUSTED, the stream of a proxy that leaves more than its budget of responses unread", async () => {
  const response = frameDiscoveryResponse({
    version_info: "v1",
    resources: [new Uint8Array(512 * 1024).fill(5)],
    type_url: TYPE_URL.cluster,
    nonce: "n1",
  });
  // The fake writes the framed bytes as its message, so each message the relay takes is as long, and half the
  // budget: the third one the proxy has not read passes it.
  const messageBytes = response.length;
  let upstreamCancelled = false;
  const upstream = await adsUpstream(
    // A discovery server pushing as fast as the relay takes its responses, until its stream is cancelled.
    (call) => {
      call.on("error", () => {});
      call.on("cancelled", () => upstreamCancelled = true);
      call.once("data", async () => {
        for (let i = 0; i < 64 && !call.cancelled; i++) {
          if (!call.write(Buffer.from(response))) await new Promise((r) => call.once("drain", r));
        }
      });
    },
  );
  const dir = await Deno.makeTempDir({ prefix: "xds_proxy_test_" });
  // The send timeout never passes: only the budget can end the stream.
  const clock = FakeTimers.createClock();
  const log = new RecordingLogger();
  const proxy = await startXdsProxy({
    socket: `${dir}/xds.sock`,
    upstream: { address: upstream.address, mutualTls: false, serverName: "unused" },
    secrets: { current: undefined, onChange: () => () => {} },
    log,
    maxReceiveMessageBytes: 16 * 1024 * 1024,
    timers: timersOf(clock),
    maxHeldResponseBytes: 2 * messageBytes,
  });
  const stalled = await StalledH2Client.open(
    { unix: `${dir}/xds.sock` },
    ADS_SERVICE_DEFINITION.StreamAggregatedResources.path,
    requestType.encode(requestType.fromObject({ type_url: TYPE_URL.cluster })).finish(),
  );
  try {
    await waitFor(() => upstreamCancelled, "the relay giving up the upstream stream of the unread proxy");
    assert.equal(log.matching("warn", "not reading its responses").length, 1);
    assert.deepEqual(log.matching("warn", "not reading its responses")[0].fields, {
      heldBytes: 2 * messageBytes,
      maxHeldBytes: 2 * messageBytes,
    });
    // The status waits behind what the proxy was sent: it sees its stream end once it reads again.
    await stalled.resume();
    await waitFor(() => stalled.streamEnded, "the proxy's stream ended");
  } finally {
    await stalled.close();
    await proxy.close(0);
    await upstream.close(0);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("The xDS proxy relays one stream of the proxy at a time: a newer stream ends the one before", async () => {
  const response = frameDiscoveryResponse({
    version_info: "1",
    type_url: TYPE_URL.cluster,
    nonce: "n",
    resources: [],
  });
  const upstream = await fixedAdsServer(response);
  const log = new RecordingLogger();
  const relay = await relayTo(upstream.address, log);
  const request = Buffer.from(
    requestType.encode(requestType.fromObject({ type_url: TYPE_URL.cluster })).finish(),
  );
  const openStream = async () => {
    const call = relay.stream();
    const ended = new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
    call.on("error", () => {});
    const answered = new Promise<void>((resolve) => call.once("data", () => resolve()));
    call.write(request);
    await answered;
    return { call, ended };
  };
  try {
    const first = await openStream();
    const second = await openStream();
    const status = await first.ended;
    assert.equal(status.code, grpc.status.UNAVAILABLE);
    assert.equal(status.details, "A newer ADS stream from the proxy replaced this one");
    // The newer stream is still relayed.
    const again = new Promise<void>((resolve) => second.call.once("data", () => resolve()));
    second.call.write(request);
    await again;
    assert.equal(log.matching("warn", "replaces the one before").length, 1);
    second.call.cancel();
  } finally {
    await relay.close();
    await upstream.close(0);
  }
});

Deno.test("The xDS proxy stops reading a proxy's requests while the discovery server leaves its budget unanswered", async () => {
  // A discovery server that counts requests and answers none until told to, then answers each.
  let received = 0;
  let answering = false;
  let answerLast: (() => void) | undefined;
  const response = Buffer.from(
    frameDiscoveryResponse({ version_info: "1", type_url: TYPE_URL.cluster, nonce: "n", resources: [] }),
  );
  const upstream = await adsUpstream(
    (call) => {
      call.on("data", () => {
        received++;
        if (answering) call.write(response);
        else answerLast = () => call.write(response);
      });
      call.on("end", () => call.end());
    },
  );
  const log = new RecordingLogger();
  const budget = 64 * 1024;
  const relay = await relayTo(upstream.address, log, { maxUnansweredRequestBytes: budget });
  const requestBytes = 16 * 1024;
  const request = Buffer.from(
    requestType.encode(
      requestType.fromObject({ type_url: TYPE_URL.cluster, resource_names: ["n".repeat(requestBytes)] }),
    ).finish(),
  );
  const call = relay.stream();
  call.on("error", () => {});
  call.on("data", () => {});
  try {
    const sent = 40;
    for (let i = 0; i < sent; i++) call.write(request);
    let last = -1;
    let steady = 0;
    await waitFor(
      () => {
        steady = received === last ? steady + 1 : 0;
        last = received;
        return received > 0 && steady >= 10;
      },
      "the relay to stop passing requests on",
      10_000,
      20,
    );
    // The budget's worth and the one that went past it; the rest wait in the proxy's stream.
    assert.equal(received, Math.floor(budget / request.length) + 1);
    assert.equal(log.matching("warn", "reading them paused").length, 1);
    // An answer lets the relay go on; every request arrives, none lost.
    answering = true;
    answerLast?.();
    await waitFor(() => received === sent, `all ${sent} requests at the discovery server (${received})`);
    call.cancel();
  } finally {
    await relay.close();
    await upstream.close(0);
  }
});
