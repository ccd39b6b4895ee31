import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { startGrpcServer } from "./grpc_server.ts";
import { sendPrefixedWithoutCopy } from "./prefixed_send.ts";
import { WireWriter } from "../../proto/_wire.ts";
import { silentLogger } from "../log/logger.ts";

const asBuffer = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** One duplex method whose server answers each request with the messages `reply` gives. */
const DEFINITION = {
  Stream: {
    path: "/test.Prefixed/Stream",
    requestStream: true,
    responseStream: true,
    requestSerialize: asBuffer,
    requestDeserialize: asBuffer,
    responseSerialize: asBuffer,
    responseDeserialize: asBuffer,
  },
} as const satisfies grpc.ServiceDefinition;

function prefixed(payload: Uint8Array): Uint8Array {
  return new WireWriter(payload.length, { grpcPrefix: true }).raw(payload).finish();
}

/** What the HTTP/2 stream under the call was handed: the chunks, by identity of their memory. */
type Writes = Uint8Array[];

/**
 * Serves `messages` on one stream (with the prefix path installed or not), reads them back with a grpc-js
 * client, and returns what arrived and what the server's HTTP/2 stream was handed to write.
 */
async function roundTrip(install: boolean, messages: readonly Uint8Array[]) {
  const writes: Writes = [];
  let installed: boolean | undefined;
  const server = await startGrpcServer({
    name: "Prefixed",
    listen: { tcp: "127.0.0.1:0", flag: "--testAddr" },
    logger: silentLogger,
    services: [{
      definition: DEFINITION,
      implementation: {
        Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
          if (install) installed = sendPrefixedWithoutCopy(call);
          // deno-lint-ignore no-explicit-any
          const stream = (call as any).call.stream;
          const write = stream.write.bind(stream);
          stream.write = (chunk: Uint8Array, ...rest: unknown[]) => {
            writes.push(chunk);
            return write(chunk, ...rest);
          };
          call.once("data", () => {
            for (const m of messages) call.write(m as Buffer);
            call.end();
          });
        },
      },
    }],
  });
  const Client = grpc.makeClientConstructor(DEFINITION, "Prefixed");
  const client = new Client(server.address, grpc.credentials.createInsecure());
  try {
    const received: Uint8Array[] = [];
    // deno-lint-ignore no-explicit-any
    const call = (client as any).Stream() as grpc.ClientDuplexStream<Buffer, Buffer>;
    await new Promise<void>((resolve, reject) => {
      call.on("data", (b: Buffer) => received.push(new Uint8Array(b)));
      call.on("status", (s: grpc.StatusObject) => s.code === grpc.status.OK ? resolve() : reject(s));
      call.on("error", () => {});
      call.write(asBuffer(Uint8Array.of(1)));
      call.end();
    });
    return { received, writes, installed };
  } finally {
    client.close();
    await server.close();
  }
}

const sharesMemory = (a: Uint8Array, b: Uint8Array) => a.buffer === b.buffer;

Deno.test("sendPrefixedWithoutCopy hands a prefixed message to HTTP/2 as is, and it arrives whole", async () => {
  const big = prefixed(new Uint8Array(300_000).map((_, i) => i % 251));
  const small = prefixed(Uint8Array.of(7, 8, 9));
  const { received, writes, installed } = await roundTrip(true, [big, small, big]);
  assert.equal(installed, true);
  assert.deepEqual(received, [big, small, big].map((m) => new Uint8Array(m)));
  const dataWrites = writes.filter((w) => w.length > 5);
  assert.equal(dataWrites.length, 3);
  assert.ok(
    sharesMemory(dataWrites[0], big) && sharesMemory(dataWrites[2], big),
    "no copy of the shared one",
  );
  assert.ok(sharesMemory(dataWrites[1], small));
});

Deno.test("Without sendPrefixedWithoutCopy grpc-js copies every message", async () => {
  const big = prefixed(new Uint8Array(1000).fill(3));
  const { received, writes } = await roundTrip(false, [big]);
  assert.deepEqual(received, [new Uint8Array(big)]);
  assert.equal(writes.filter((w) => w.length > 5 && sharesMemory(w, big)).length, 0);
});

Deno.test("sendPrefixedWithoutCopy leaves a message without its prefix to grpc-js", async () => {
  const plain = new Uint8Array(2000).fill(5);
  const view = new Uint8Array(64).fill(0xff).subarray(10, 40);
  const { received, writes } = await roundTrip(true, [plain, view]);
  assert.deepEqual(received, [plain, new Uint8Array(view)]);
  assert.equal(writes.filter((w) => sharesMemory(w, plain) || sharesMemory(w, view)).length, 0);
});

Deno.test("sendPrefixedWithoutCopy changes nothing on an object that is not a grpc-js server call", () => {
  const notACall = { call: { stream: {} } };
  assert.equal(sendPrefixedWithoutCopy(notACall), false);
  assert.deepEqual(notACall, { call: { stream: {} } });
  assert.equal(sendPrefixedWithoutCopy(undefined), false);
});
