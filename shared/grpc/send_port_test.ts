import assert from "node:assert/strict";
import type { Buffer } from "node:buffer";
import type * as grpc from "@grpc/grpc-js";
import FakeTimers from "@sinonjs/fake-timers";
import { WireWriter } from "@mesh/proto/_wire";
import { startGrpcServer } from "./grpc_server.ts";
import { SendDeadlines } from "./send_deadlines.ts";
import { type SendPort, SendPorts, SendTimeoutError, StreamClosedError } from "./send_port.ts";
import { OUTBOUND_POLL_MS } from "./outbound_state.ts";
import { StalledH2Client, transportAtRest } from "./_stalled_h2_client.ts";
import { waitFor } from "../testing/wait_for.ts";
import { timersOf } from "../testing/fake_timers.ts";
import { silentLogger } from "../log/logger.ts";
import { ECHO_DEFINITION } from "./_test_echo_service.ts";

/** A message four times HTTP/2's initial window, with its gRPC prefix in front of it. */
const BIG = new WireWriter(256 * 1024, { grpcPrefix: true }).raw(new Uint8Array(256 * 1024).fill(7)).finish();

/** What a test sees of the one stream its client opens: the port, the first send, and the timeouts told. */
interface Opened {
  readonly port: SendPort;
  readonly sent: Promise<void>;
  readonly timeouts: SendTimeoutError[];
}

/**
 * A server whose stream sends {@link BIG} through its port on the first request, to a client that grants no
 * flow-control credit until resumed; deadlines and looks on `clock`.
 */
async function stalledSend(clock: FakeTimers.Clock, timeoutMs: number) {
  const timers = timersOf(clock);
  const deadlines = new SendDeadlines(timeoutMs, timers);
  const ports = new SendPorts({ deadlines, setting: "TEST_TIMEOUT", timers });
  const opened = Promise.withResolvers<Opened>();
  const server = await startGrpcServer({
    name: "Port",
    listen: { tcp: "127.0.0.1:0", flag: "--testAddr" },
    logger: silentLogger,
    services: [{
      definition: ECHO_DEFINITION,
      implementation: {
        Hold: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
          const timeouts: SendTimeoutError[] = [];
          const port = ports.open(call, "stream-1", (error) => {
            timeouts.push(error);
            port.close(4, "Timed out");
          });
          call.once("data", () => {
            const sent = port.send(BIG, "big");
            sent.catch(() => {});
            opened.resolve({ port, sent, timeouts });
          });
          call.on("error", () => {});
        },
      },
    }],
  });
  const client = await StalledH2Client.open(server.port, ECHO_DEFINITION.Hold.path, Uint8Array.of(1));
  const { port, sent, timeouts } = await opened.promise;
  let outcome: "resolved" | Error | undefined;
  sent.then(() => outcome = "resolved", (error) => outcome = error);
  await waitFor(() => client.dataBytes >= 60_000, "the peer taking its window");
  await transportAtRest();
  return {
    deadlines,
    port,
    sent,
    timeouts,
    client,
    outcome: () => outcome,
    close: async () => {
      await client.close();
      await server.close(0);
    },
  };
}

Deno.test("A send resolves only once the socket has written the whole message", async () => {
  const clock = FakeTimers.createClock();
  const run = await stalledSend(clock, 60_000);
  try {
    assert.equal(run.outcome(), undefined, "a peer that took only its window has not taken the message");
    assert.equal(run.port.sendsInProgress, 1);
    await run.client.resume();
    await waitFor(() => {
      clock.tick(OUTBOUND_POLL_MS.max);
      return run.outcome() !== undefined;
    }, "the send to settle");
    assert.equal(run.outcome(), "resolved");
    assert.ok(run.client.dataBytes >= BIG.length, "the peer has every byte when the send resolves");
    assert.equal(run.port.sendsInProgress, 0);
  } finally {
    await run.close();
  }
});

Deno.test("A send its peer does not take within the timeout rejects with SendTimeoutError and tells the owner", async () => {
  const clock = FakeTimers.createClock();
  const run = await stalledSend(clock, 1_000);
  try {
    clock.tick(999);
    assert.equal(run.outcome(), undefined, "not before the timeout");
    clock.tick(1);
    await assert.rejects(run.sent, (error: unknown) => {
      assert.ok(error instanceof SendTimeoutError);
      assert.equal(error.what, "big");
      assert.match(
        error.message,
        /^Sending "big" on stream "stream-1" did not finish within 1000ms \(TEST_TIMEOUT\)/,
      );
      return true;
    });
    assert.equal(run.timeouts.length, 1, "the owner is told once");
    assert.ok(run.port.closed, "the owner ended the stream");
    await assert.rejects(run.port.send(Uint8Array.of(1), "after"), StreamClosedError);
    await run.client.resume();
    await waitFor(() => {
      clock.tick(OUTBOUND_POLL_MS.max);
      return run.client.streamEnded;
    }, "the stream ended for the peer");
  } finally {
    await run.close();
  }
});

Deno.test("A send waiting when the stream closes rejects with StreamClosedError, as does every later one", async () => {
  const clock = FakeTimers.createClock();
  const run = await stalledSend(clock, 60_000);
  try {
    run.port.peerGone();
    await assert.rejects(run.sent, (error: unknown) => {
      assert.ok(error instanceof StreamClosedError);
      assert.equal(error.message, `Stream "stream-1" is closed`);
      return true;
    });
    assert.equal(run.port.sendsInProgress, 0);
    await assert.rejects(run.port.send(Uint8Array.of(1), "after"), StreamClosedError);
    assert.equal(run.timeouts.length, 0);
    assert.equal(run.deadlines.size, 0, "no deadline is left pending");
  } finally {
    await run.close();
  }
});

Deno.test("A port counts each send in progress and, when its peer leaves, ends those still in it in order", async () => {
  const clock = FakeTimers.createClock();
  const timers = timersOf(clock);
  const deadlines = new SendDeadlines(60_000, timers);
  const ports = new SendPorts({ deadlines, setting: "TEST_TIMEOUT", timers });
  // A call that only records the write callbacks: the test says when each message left.
  const callbacks: ((error?: Error | null) => void)[] = [];
  const call = {
    write: (_bytes: unknown, written: (error?: Error | null) => void) => callbacks.push(written),
    end: () => {},
    emit: () => false,
  } as unknown as Parameters<SendPorts["open"]>[0];
  const port = ports.open(call, "stream-2", () => {});
  const outcomes: string[] = [];
  const sends = ["first", "second", "third", "fourth"].map((what) => {
    const sent = port.send(Uint8Array.of(1), what);
    sent.then(() => outcomes.push(`${what} left`), () => outcomes.push(`${what} closed`));
    return sent;
  });
  assert.equal(port.sendsInProgress, 4);
  callbacks[1]();
  callbacks[3]();
  callbacks[3]();
  assert.equal(port.sendsInProgress, 2, "a send ends once, however often the transport calls back");
  port.peerGone();
  assert.equal(port.sendsInProgress, 0);
  callbacks[0]();
  await Promise.allSettled(sends);
  assert.deepEqual(outcomes, ["second left", "fourth left", "first closed", "third closed"]);
  assert.equal(deadlines.size, 0, "no deadline is left pending");
});
