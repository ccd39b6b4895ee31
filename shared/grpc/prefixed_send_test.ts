import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { startGrpcServer } from "./grpc_server.ts";
import {
  DEFAULT_SLICE_BYTES,
  LARGE_MESSAGE_SLICES,
  type PrefixedSendOptions,
  sendPrefixedWithoutCopy,
} from "./prefixed_send.ts";
import { StalledH2Client, transportAtRest } from "./_stalled_h2_client.ts";
import FakeTimers from "@sinonjs/fake-timers";
import { waitFor } from "../testing/wait_for.ts";
import { timersOf } from "../testing/fake_timers.ts";
import { OUTBOUND_POLL_MS } from "./outbound_state.ts";
import { WireWriter } from "@mesh/proto/_wire";
import { silentLogger } from "../log/logger.ts";
import { type Pki, SERVER_NAME, serverTls, testPki } from "./_test_pki.ts";
import { asBuffer, bytesDuplexDefinition } from "./_bytes_duplex.ts";

/** One duplex method whose server answers each request with the messages `reply` gives. */
const DEFINITION = bytesDuplexDefinition("/test.Prefixed/Stream");

function prefixed(payload: Uint8Array): Uint8Array {
  return new WireWriter(payload.length, { grpcPrefix: true }).raw(payload).finish();
}

/** What the HTTP/2 stream under the call was handed: the chunks, by identity of their memory. */
type Writes = Uint8Array[];

/**
 * Serves `messages` on one stream (with the prefix path installed or not), reads them back with a grpc-js
 * client, and returns what arrived and what the server's HTTP/2 stream was handed to write.
 */
async function roundTrip(
  install: boolean,
  messages: readonly Uint8Array[],
  after: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => void = (call) => call.end(),
  pki?: Pki,
  sendOptions: PrefixedSendOptions = { sliceBytes: SLICE },
) {
  const writes: Writes = [];
  let installed: boolean | undefined;
  const server = await startGrpcServer({
    name: "Prefixed",
    listen: { tcp: "127.0.0.1:0", flag: "--testAddr" },
    logger: silentLogger,
    ...(pki === undefined ? {} : { tls: serverTls(pki) }),
    services: [{
      definition: DEFINITION,
      implementation: {
        Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
          if (install) installed = sendPrefixedWithoutCopy(call, sendOptions);
          // deno-lint-ignore no-explicit-any
          const stream = (call as any).call.stream;
          const write = stream.write.bind(stream);
          stream.write = (chunk: Uint8Array, ...rest: unknown[]) => {
            writes.push(chunk);
            return write(chunk, ...rest);
          };
          call.once("data", () => {
            for (const m of messages) call.write(m as Buffer);
            after(call);
          });
        },
      },
    }],
  });
  const Client = grpc.makeClientConstructor(DEFINITION, "Prefixed");
  const client = pki === undefined
    ? new Client(server.address, grpc.credentials.createInsecure())
    : new Client(server.address, grpc.credentials.createSsl(Buffer.from(pki.caPem)), {
      "grpc.ssl_target_name_override": SERVER_NAME,
    });
  try {
    const received: Uint8Array[] = [];
    let status: grpc.StatusObject | undefined;
    // deno-lint-ignore no-explicit-any
    const call = (client as any).Stream() as grpc.ClientDuplexStream<Buffer, Buffer>;
    // A call that never ends fails the test instead of hanging it: a lost status is one of the failures.
    let guard: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve, reject) => {
      guard = setTimeout(() => reject(new Error("the call got no status within 10 s")), 10_000);
      call.on("data", (b: Buffer) => received.push(new Uint8Array(b)));
      call.on("status", (s: grpc.StatusObject) => {
        status = s;
        resolve();
      });
      call.on("error", () => {});
      call.write(asBuffer(Uint8Array.of(1)));
      call.end();
    }).finally(() => clearTimeout(guard));
    return { received, writes, installed, status: status! };
  } finally {
    client.close();
    await server.close(0);
  }
}

const SLICE = 4096;
const sharesMemory = (a: Uint8Array, b: Uint8Array) => a.buffer === b.buffer;
const OK = grpc.status.OK;

Deno.test("sendPrefixedWithoutCopy hands a prefixed message to HTTP/2 as is, and it arrives whole", async () => {
  const shared = prefixed(new Uint8Array(SLICE - 5).map((_, i) => i % 251));
  const small = prefixed(Uint8Array.of(7, 8, 9));
  const { received, writes, installed, status } = await roundTrip(true, [shared, small, shared]);
  assert.equal(installed, true);
  assert.equal(status.code, OK);
  assert.deepEqual(received, [shared, small, shared].map((m) => new Uint8Array(m)));
  const dataWrites = writes.filter((w) => w.length > 5);
  assert.equal(dataWrites.length, 3);
  assert.ok(sharesMemory(dataWrites[0], shared) && sharesMemory(dataWrites[2], shared), "shared, not copied");
  assert.ok(sharesMemory(dataWrites[1], small));
});

Deno.test("sendPrefixedWithoutCopy hands a long message over in slices of its own memory, in order", async () => {
  const big = prefixed(new Uint8Array(5 * SLICE + 123).map((_, i) => i % 253));
  const small = prefixed(Uint8Array.of(1, 2));
  const { received, writes, status } = await roundTrip(true, [big, small, big]);
  assert.equal(status.code, OK);
  assert.deepEqual(received, [big, small, big].map((m) => new Uint8Array(m)));
  const slices = writes.filter((w) => sharesMemory(w, big));
  assert.equal(slices.length, 2 * 6, "six slices per copy of the long message");
  assert.ok(slices.every((w) => w.length <= SLICE));
  const joined = new Uint8Array(big.length + 5);
  slices.slice(0, 6).reduce((at, w) => (joined.set(w, at), at + w.length), 0);
  assert.deepEqual(joined, new Uint8Array(big.buffer), "the slices are the prefixed message, front to back");
});

Deno.test("By default a response longer than 8 KiB goes to HTTP/2 in slices of at most 8 KiB", async () => {
  const cds = prefixed(new Uint8Array(30_000).map((_, i) => i % 239));
  const { received, writes, status } = await roundTrip(true, [cds], undefined, undefined, {});
  assert.equal(status.code, OK);
  assert.deepEqual(received, [new Uint8Array(cds)]);
  const slices = writes.filter((w) => sharesMemory(w, cds));
  assert.equal(slices.length, Math.ceil(cds.length / (8 * 1024)));
  assert.ok(slices.every((w) => w.length <= 8 * 1024), `slices of ${slices.map((w) => w.length)} bytes`);
  assert.equal(DEFAULT_SLICE_BYTES, 8 * 1024);
});

Deno.test("Slices are paced by what the socket wrote over TLS too, and arrive whole", async () => {
  const big = prefixed(new Uint8Array(100 * SLICE + 7).map((_, i) => i % 241));
  const { received, writes, status } = await roundTrip(true, [big, big], undefined, await testPki());
  assert.equal(status.code, OK);
  assert.deepEqual(received, [new Uint8Array(big), new Uint8Array(big)]);
  assert.equal(writes.filter((w) => sharesMemory(w, big)).length, 2 * 101);
});

Deno.test("A proxy that grants no credit holds the server to its window and one slice of the message", async () => {
  const big = prefixed(new Uint8Array(256 * SLICE).fill(4));
  const clock = FakeTimers.createClock();
  const handed: Uint8Array[] = [];
  const server = await startGrpcServer({
    name: "Prefixed",
    listen: { tcp: "127.0.0.1:0", flag: "--testAddr" },
    logger: silentLogger,
    services: [{
      definition: DEFINITION,
      implementation: {
        Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
          sendPrefixedWithoutCopy(call, { sliceBytes: SLICE, timers: timersOf(clock) });
          // deno-lint-ignore no-explicit-any
          const stream = (call as any).call.stream;
          const write = stream.write.bind(stream);
          stream.write = (chunk: Uint8Array, ...rest: unknown[]) => {
            if (sharesMemory(chunk, big)) handed.push(chunk);
            return write(chunk, ...rest);
          };
          call.once("data", () => call.write(big as Buffer, () => call.end()));
        },
      },
    }],
  });
  // Grants only HTTP/2's initial 64 KiB window until resumed.
  const client = await StalledH2Client.open(server.port, DEFINITION.Stream.path, Uint8Array.of(1));
  try {
    await waitFor(() => client.dataBytes >= 60_000, "the first window's worth of data");
    // Real time and a minute of the sender's looks at the socket hand over nothing more.
    await transportAtRest();
    clock.tick(60_000);
    await transportAtRest();
    const held = handed.length;
    assert.ok(held <= 65_535 / SLICE + 2, `at most a window and a slice handed over, got ${held} slices`);
    await client.resume();
    // Moving the sender's clock on lets it look again whenever it waits on it.
    await waitFor(() => {
      clock.tick(OUTBOUND_POLL_MS.max);
      return client.streamEnded;
    }, "the whole message and the trailers");
    assert.equal(client.dataBytes, big.length + 5);
    assert.equal(handed.length, 257);
  } finally {
    await client.close();
    await server.close(0);
  }
});

Deno.test("A status grpc-js sends on its own while a message is in slices comes after the whole message", async () => {
  const big = prefixed(new Uint8Array(40 * SLICE).fill(9));
  // What grpc-js does when a call's deadline passes or a request is refused: a status straight away, not
  // queued behind the writes as `call.end()` and an emitted error are.
  const deadline = { code: grpc.status.DEADLINE_EXCEEDED, details: "Deadline exceeded", metadata: null };
  const { received, status } = await roundTrip(
    true,
    [big],
    // deno-lint-ignore no-explicit-any
    (call) => (call as any).call.sendStatus(deadline),
  );
  assert.equal(status.code, grpc.status.DEADLINE_EXCEEDED);
  assert.deepEqual(received, [new Uint8Array(big)]);
});

Deno.test("An error emitted while a message is in slices ends the call after the whole message", async () => {
  const big = prefixed(new Uint8Array(40 * SLICE).fill(9));
  const { received, status } = await roundTrip(
    true,
    [big],
    (call) => call.emit("error", { code: grpc.status.RESOURCE_EXHAUSTED, details: "closing" }),
  );
  assert.equal(status.code, grpc.status.RESOURCE_EXHAUSTED);
  assert.equal(status.details, "closing");
  assert.deepEqual(received, [new Uint8Array(big)]);
});

Deno.test("sendPrefixedWithoutCopy refuses a slice below 1 KiB", () => {
  assert.throws(
    () => sendPrefixedWithoutCopy({}, { sliceBytes: 100 }),
    /slice size 100: expected an integer/,
  );
});

Deno.test("Messages from the large-message length go in the longer slices, shorter ones as before", async () => {
  const { fromBytes, sliceBytes } = LARGE_MESSAGE_SLICES;
  const long = prefixed(new Uint8Array(fromBytes + 3 * sliceBytes).map((_, i) => i % 233));
  const short = prefixed(new Uint8Array(fromBytes - 1024).map((_, i) => i % 229));
  const { received, writes, status } = await roundTrip(true, [long, short], undefined, undefined, {
    large: LARGE_MESSAGE_SLICES,
  });
  assert.equal(status.code, OK);
  assert.deepEqual(received, [new Uint8Array(long), new Uint8Array(short)]);
  const longSlices = writes.filter((w) => sharesMemory(w, long));
  assert.equal(longSlices.length, Math.ceil((long.length + 5) / sliceBytes), "the prefix goes in the first");
  assert.ok(longSlices.slice(0, -1).every((w) => w.length === sliceBytes));
  const shortSlices = writes.filter((w) => sharesMemory(w, short));
  assert.equal(shortSlices.length, Math.ceil((short.length + 5) / DEFAULT_SLICE_BYTES));
  assert.ok(shortSlices.every((w) => w.length <= DEFAULT_SLICE_BYTES));
});

Deno.test("sendPrefixedWithoutCopy refuses large-message slices shorter than its own", () => {
  assert.throws(
    () => sendPrefixedWithoutCopy({}, { sliceBytes: 4096, large: { fromBytes: 1 << 20, sliceBytes: 2048 } }),
    /large-message slice size 2048: expected an integer of at least 4096 bytes/,
  );
});

Deno.test("Without sendPrefixedWithoutCopy grpc-js copies every message", async () => {
  const big = prefixed(new Uint8Array(1000).fill(3));
  const { received, writes, status } = await roundTrip(false, [big]);
  assert.equal(status.code, OK);
  assert.deepEqual(received, [new Uint8Array(big)]);
  assert.equal(writes.filter((w) => w.length > 5 && sharesMemory(w, big)).length, 0);
});

Deno.test("sendPrefixedWithoutCopy leaves a message without its prefix to grpc-js", async () => {
  const plain = new Uint8Array(2000).fill(5);
  const view = new Uint8Array(64).fill(0xff).subarray(10, 40);
  const { received, writes, status } = await roundTrip(true, [plain, view]);
  assert.equal(status.code, OK);
  assert.deepEqual(received, [plain, new Uint8Array(view)]);
  assert.equal(writes.filter((w) => sharesMemory(w, plain) || sharesMemory(w, view)).length, 0);
});

Deno.test("sendPrefixedWithoutCopy changes nothing on an object that is not a grpc-js server call", () => {
  const notACall = { call: { stream: {} } };
  assert.equal(sendPrefixedWithoutCopy(notACall), false);
  assert.deepEqual(notACall, { call: { stream: {} } });
  assert.equal(sendPrefixedWithoutCopy(undefined), false);
});
