import "reflect-metadata";
import { Buffer } from "node:buffer";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import FakeTimers from "@sinonjs/fake-timers";
import {
  type AdmissionRefusal,
  GrpcAdmission,
  type GrpcAdmissionLimits,
  isRefusal,
  peerAddressKey,
} from "./grpc_admission.ts";
import {
  ECHO_DEFINITION,
  EchoTestClient,
  startEchoServer,
  TEST_ADMISSION_SETTINGS,
} from "./_test_echo_service.ts";
import { baseServerCall } from "./base_server_call.ts";
import { outboundState } from "./outbound_state.ts";
import { sendPrefixedWithoutCopy } from "./prefixed_send.ts";
import { waitFor } from "../testing/wait_for.ts";
import { RecordingLogger } from "../testing/recording_logger.ts";

const HELLO = new TextEncoder().encode("hello");

const ROOMY: GrpcAdmissionLimits = {
  maxConnections: 100,
  maxConnectionsPerPeer: 100,
  maxStreams: 100,
  maxStreamsPerPeer: 100,
  connectionRatePerPeer: 100,
};

/** A client on its own HTTP/2 connection, as separate workloads have. */
function ownConnection(address: string): EchoTestClient {
  return new EchoTestClient(address, grpc.credentials.createInsecure(), {
    "grpc.use_local_subchannel_pool": 1,
  });
}

/** The status a held stream ends with (waited for within `waitFor`'s bound). */
async function statusOf(
  call: { on(event: "status", listener: (status: grpc.StatusObject) => void): unknown },
): Promise<grpc.StatusObject> {
  let status: grpc.StatusObject | undefined;
  call.on("status", (s) => status = s);
  await waitFor(() => status !== undefined, "the stream's status");
  return status!;
}

async function startAdmitted(admission: GrpcAdmission, logger = new RecordingLogger()) {
  const refusals: { refusal: AdmissionRefusal; kind: string }[] = [];
  const started = await startEchoServer({
    admission,
    logger,
    onRefused: (refusal, kind) => refusals.push({ refusal, kind }),
  });
  return { ...started, refusals, logger };
}

Deno.test("startGrpcServer bounds the streams of one peer address over all its connections", async () => {
  const admission = new GrpcAdmission({ ...ROOMY, maxStreamsPerPeer: 2 }, TEST_ADMISSION_SETTINGS);
  const { server, holds, refusals, logger } = await startAdmitted(admission);
  const first = ownConnection(server.address);
  const second = ownConnection(server.address);
  try {
    const held = first.hold();
    second.hold();
    await waitFor(() => holds.open === 2, "two streams open on two connections");
    const overStatus = await statusOf(second.hold());
    assert.equal(overStatus.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.match(overStatus.details, /2 streams are open from peer address 127\.0\.0\.1/);
    assert.match(overStatus.details, /TEST_MAX_STREAMS_PER_PEER=2/);
    assert.equal(holds.peak, 2, "the refused stream's handler never ran");
    assert.equal(await statusOf(first.hold()).then((s) => s.code), grpc.status.RESOURCE_EXHAUSTED);
    assert.deepEqual(refusals.map((r) => [r.kind, r.refusal.reason]), [
      ["stream", "peer_stream_limit"],
      ["stream", "peer_stream_limit"],
    ]);
    assert.equal(logger.matching("warn", "refused a stream").length, 1, "logged once for the peer");

    held.end();
    await waitFor(() => admission.streams === 1, "the ended stream's place freed");
    assert.deepEqual(await first.unary("Echo", HELLO), HELLO, "a new stream is admitted again");
  } finally {
    first.close();
    second.close();
    await server.close();
  }
  await waitFor(() => admission.streams === 0 && admission.peers === 0, "every place freed");
});

Deno.test("listeners sharing an admission share its server-wide stream bound", async () => {
  const admission = new GrpcAdmission({ ...ROOMY, maxStreams: 2 }, TEST_ADMISSION_SETTINGS);
  const one = await startAdmitted(admission);
  const other = await startAdmitted(admission);
  const toOne = ownConnection(one.server.address);
  const toOther = ownConnection(other.server.address);
  try {
    toOne.hold();
    toOther.hold();
    await waitFor(() => one.holds.open === 1 && other.holds.open === 1, "a stream open on each listener");
    const status = await statusOf(toOne.hold());
    assert.equal(status.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.match(status.details, /2 streams are open on this server.*TEST_MAX_STREAMS=2/);
    assert.equal(one.refusals[0]?.refusal.reason, "server_stream_limit");
  } finally {
    toOne.close();
    toOther.close();
    await Promise.all([one.server.close(), other.server.close()]);
  }
});

Deno.test("startGrpcServer closes a connection past the per-peer bound on accept", async () => {
  const admission = new GrpcAdmission({ ...ROOMY, maxConnectionsPerPeer: 2 }, TEST_ADMISSION_SETTINGS);
  const { server, refusals, logger } = await startAdmitted(admission);
  const clients = [0, 1, 2].map(() => ownConnection(server.address));
  try {
    assert.deepEqual(await clients[0].unary("Echo", HELLO), HELLO);
    assert.deepEqual(await clients[1].unary("Echo", HELLO), HELLO);
    const over = await clients[2].unary("Echo", HELLO).catch((error: grpc.ServiceError) => error.code);
    assert.equal(over, grpc.status.UNAVAILABLE);
    assert.equal(refusals[0]?.kind, "connection");
    assert.equal(refusals[0]?.refusal.reason, "peer_connection_limit");
    const [line] = logger.matching("warn", "refused a connection");
    assert.match(
      line.msg,
      /2 connections are open from peer address 127\.0\.0\.1.*TEST_MAX_CONNECTIONS_PER_PEER=2/,
    );

    clients[0].close();
    await waitFor(() => admission.connections === 1, "the closed connection's place freed");
    clients.push(ownConnection(server.address));
    assert.deepEqual(await clients[3].unary("Echo", HELLO), HELLO, "a new connection is admitted again");
  } finally {
    for (const client of clients) client.close();
    await server.close();
  }
  await waitFor(() => admission.connections === 0 && admission.peers === 0, "every place freed");
});

Deno.test("GrpcAdmission gives each peer address a budget of new connections a minute, refilled over it", () => {
  const clock = FakeTimers.createClock(0);
  const admission = new GrpcAdmission(
    { ...ROOMY, connectionRatePerPeer: 2 },
    TEST_ADMISSION_SETTINGS,
    () => clock.now,
  );
  const admit = (address: string | undefined) => {
    const result = admission.admitConnection(address);
    if (!isRefusal(result)) result.release();
    return result;
  };
  assert.equal(isRefusal(admit("10.0.0.1")), false);
  assert.equal(isRefusal(admit("10.0.0.1")), false, "the budget comes at once");
  const over = admit("10.0.0.1");
  assert.ok(isRefusal(over));
  assert.equal(over.reason, "peer_connection_rate");
  assert.match(
    over.message,
    /peer address 10\.0\.0\.1 opened 2 connections within a minute, the most TEST_CONNECTION_RATE_PER_PEER=2 allows; retry in 30 s/,
  );
  assert.equal(admission.connections, 0, "a connection closed still spent its budget");
  assert.equal(isRefusal(admit("10.0.0.2")), false, "another address has its own budget");
  assert.equal(isRefusal(admit(undefined)), false, "a Unix socket has none");
  assert.equal(isRefusal(admit(undefined)), false);
  assert.equal(isRefusal(admit(undefined)), false);
  clock.tick(29_999);
  assert.equal(isRefusal(admit("10.0.0.1")), true);
  clock.tick(1);
  assert.equal(isRefusal(admit("10.0.0.1")), false, "one connection a 30 s comes back");
});

Deno.test("startGrpcServer closes a connection past its address's connection budget on accept", async () => {
  const admission = new GrpcAdmission({ ...ROOMY, connectionRatePerPeer: 2 }, TEST_ADMISSION_SETTINGS);
  const { server, refusals, logger } = await startAdmitted(admission);
  const clients: EchoTestClient[] = [];
  try {
    for (const _ of [0, 1]) {
      const client = ownConnection(server.address);
      clients.push(client);
      assert.deepEqual(await client.unary("Echo", HELLO), HELLO);
      client.close();
    }
    await waitFor(() => admission.connections === 0, "both connections closed");
    const third = ownConnection(server.address);
    clients.push(third);
    const over = await third.unary("Echo", HELLO).catch((error: grpc.ServiceError) => error.code);
    assert.equal(over, grpc.status.UNAVAILABLE);
    assert.equal(refusals[0]?.kind, "connection");
    assert.equal(refusals[0]?.refusal.reason, "peer_connection_rate");
    assert.match(logger.matching("warn", "refused a connection")[0].msg, /TEST_CONNECTION_RATE_PER_PEER=2/);
  } finally {
    for (const client of clients) client.close();
    await server.close();
  }
});

Deno.test("startGrpcServer closes a connection past the server-wide bound on accept", async () => {
  const admission = new GrpcAdmission({ ...ROOMY, maxConnections: 1 }, TEST_ADMISSION_SETTINGS);
  const { server, refusals } = await startAdmitted(admission);
  const first = ownConnection(server.address);
  const second = ownConnection(server.address);
  try {
    assert.deepEqual(await first.unary("Echo", HELLO), HELLO);
    const over = await second.unary("Echo", HELLO).catch((error: grpc.ServiceError) => error.code);
    assert.equal(over, grpc.status.UNAVAILABLE);
    assert.equal(refusals[0]?.refusal.reason, "server_connection_limit");
    assert.match(refusals[0]?.refusal.message, /TEST_MAX_CONNECTIONS=1/);
  } finally {
    first.close();
    second.close();
    await server.close();
  }
});

Deno.test("the transport stays readable under the admission interceptor", async () => {
  const seen: { stream: boolean; outbound: boolean; prefixed: boolean }[] = [];
  const reply = (call: grpc.ServerUnaryCall<unknown, unknown>, done: grpc.sendUnaryData<unknown>) => {
    seen.push({
      stream: baseServerCall(call)?.stream !== undefined,
      outbound: outboundState(call) !== undefined,
      prefixed: sendPrefixedWithoutCopy(call),
    });
    done(null, Buffer.from(HELLO));
  };
  const { server } = await startEchoServer({
    admission: new GrpcAdmission(ROOMY, TEST_ADMISSION_SETTINGS),
    services: [{ definition: ECHO_DEFINITION, implementation: { Echo: reply, Peer: reply, Hold: () => {} } }],
  });
  const client = ownConnection(server.address);
  try {
    await client.unary("Echo", HELLO);
    assert.deepEqual(seen, [{ stream: true, outbound: true, prefixed: true }]);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("GrpcAdmission refuses a bound out of range, naming its setting", () => {
  assert.throws(
    () => new GrpcAdmission({ ...ROOMY, maxStreamsPerPeer: 0 }, TEST_ADMISSION_SETTINGS),
    /Invalid TEST_MAX_STREAMS_PER_PEER "0": expected an integer from 1/,
  );
  assert.throws(
    () => new GrpcAdmission({ ...ROOMY, maxConnections: 1.5 }, TEST_ADMISSION_SETTINGS),
    /TEST_MAX_CONNECTIONS "1.5"/,
  );
});

Deno.test("an IPv4-mapped IPv6 peer counts as its IPv4 address", () => {
  assert.equal(peerAddressKey("::ffff:10.0.0.1"), "10.0.0.1");
  assert.equal(peerAddressKey("::1"), "::1");
  assert.equal(peerAddressKey(undefined), "unix socket");
});
