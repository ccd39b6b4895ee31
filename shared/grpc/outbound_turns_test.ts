import assert from "node:assert/strict";
import type { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { startGrpcServer } from "./grpc_server.ts";
import { sendPrefixedWithoutCopy } from "./prefixed_send.ts";
import { socketBytesWritten } from "./outbound_state.ts";
import { OutboundTurns } from "./outbound_turns.ts";
import { WireWriter } from "@mesh/proto/_wire";
import { silentLogger } from "../log/logger.ts";
import { asBuffer, bytesDuplexDefinition } from "./_bytes_duplex.ts";

const DEFINITION = bytesDuplexDefinition("/test.Turns/Stream");

const SLICE = 4096;
const STREAMS = 8;

/** A server of {@link DEFINITION} whose every stream sends prefixed messages in `SLICE` slices, with `turns`. */
function startTurnsServer(
  turns: OutboundTurns | undefined,
  stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => void,
) {
  return startGrpcServer({
    name: "Turns",
    listen: { tcp: "127.0.0.1:0", flag: "--testAddr" },
    logger: silentLogger,
    services: [{
      definition: DEFINITION,
      implementation: {
        Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
          sendPrefixedWithoutCopy(call, { sliceBytes: SLICE, ...(turns ? { turns } : {}) });
          stream(call);
        },
      },
    }],
  });
}

/**
 * Opens `STREAMS` calls on one connection; once every request has arrived, the server writes `message` to each
 * in one go and ends it. Returns, for every slice the server handed to HTTP/2, how many bytes the connection
 * had been handed before it and its socket had not yet written; and what each call received.
 */
async function flood(message: Uint8Array, turns: OutboundTurns | undefined) {
  const unwrittenAtHandover: number[] = [];
  const calls: grpc.ServerDuplexStream<Buffer, Buffer>[] = [];
  let handed = 0;
  let writtenAtStart = 0;
  const server = await startTurnsServer(turns, (call) => {
    // deno-lint-ignore no-explicit-any
    const stream = (call as any).call.stream;
    const write = stream.write.bind(stream);
    stream.write = (chunk: Uint8Array, ...rest: unknown[]) => {
      if (chunk.buffer === message.buffer) {
        unwrittenAtHandover.push(handed - (socketBytesWritten(call)! - writtenAtStart));
        handed += chunk.length;
      }
      return write(chunk, ...rest);
    };
    call.once("data", () => {
      calls.push(call);
      if (calls.length < STREAMS) return;
      writtenAtStart = socketBytesWritten(call)!;
      for (const c of calls) c.write(message as Buffer, () => c.end());
    });
  });
  const Client = grpc.makeClientConstructor(DEFINITION, "Turns");
  const client = new Client(server.address, grpc.credentials.createInsecure());
  try {
    const outcomes = await Promise.all(
      Array.from(
        { length: STREAMS },
        () =>
          new Promise<{ received: Uint8Array[]; code: number }>((resolve) => {
            const received: Uint8Array[] = [];
            // deno-lint-ignore no-explicit-any
            const call = (client as any).Stream() as grpc.ClientDuplexStream<Buffer, Buffer>;
            call.on("data", (b: Buffer) => received.push(new Uint8Array(b)));
            call.on("status", (s: grpc.StatusObject) => resolve({ received, code: s.code }));
            call.on("error", () => {});
            call.write(asBuffer(Uint8Array.of(1)));
            call.end();
          }),
      ),
    );
    return { unwrittenAtHandover, outcomes };
  } finally {
    client.close();
    await server.close(0);
  }
}

const big = new WireWriter(6 * SLICE, { grpcPrefix: true })
  .raw(new Uint8Array(6 * SLICE).map((_, i) => i % 247)).finish();

Deno.test("The streams of one connection hand HTTP/2 a slice only once the socket has written the one before", async () => {
  const { unwrittenAtHandover, outcomes } = await flood(big, new OutboundTurns());
  for (const { received, code } of outcomes) {
    assert.equal(code, grpc.status.OK);
    assert.deepEqual(received, [new Uint8Array(big)]);
  }
  assert.equal(unwrittenAtHandover.length, STREAMS * 7, "seven slices a stream");
  const most = Math.max(...unwrittenAtHandover);
  assert.ok(most <= 0, `the connection held ${most} unwritten bytes when a slice was handed over`);
});

Deno.test("Without turns, each stream paces only itself: the connection holds a slice of every stream", async () => {
  const { unwrittenAtHandover, outcomes } = await flood(big, undefined);
  assert.ok(outcomes.every(({ code }) => code === grpc.status.OK));
  assert.ok(Math.max(...unwrittenAtHandover) > SLICE, "more than one slice unwritten at some handover");
});

Deno.test("A stream destroyed while its slice holds the connection's turn hands the turn on", async () => {
  const turns = new OutboundTurns();
  const calls: grpc.ServerDuplexStream<Buffer, Buffer>[] = [];
  const server = await startTurnsServer(turns, (call) => {
    call.on("error", () => {});
    call.once("data", () => {
      calls.push(call);
      if (calls.length < 2) return;
      const [first, second] = calls;
      // The first stream's slice never comes back: its stream is destroyed with the slice handed over.
      // deno-lint-ignore no-explicit-any
      const stream = (first as any).call.stream;
      stream.write = () => {
        queueMicrotask(() => stream.destroy());
        return true;
      };
      first.write(big as Buffer);
      second.write(big as Buffer, () => second.end());
    });
  });
  const Client = grpc.makeClientConstructor(DEFINITION, "Turns");
  const client = new Client(server.address, grpc.credentials.createInsecure());
  try {
    const received: Uint8Array[][] = [[], []];
    const second = Promise.withResolvers<number>();
    for (const index of [0, 1]) {
      // deno-lint-ignore no-explicit-any
      const call = (client as any).Stream() as grpc.ClientDuplexStream<Buffer, Buffer>;
      call.on("data", (b: Buffer) => received[index].push(new Uint8Array(b)));
      call.on("status", (s: grpc.StatusObject) => index === 1 && second.resolve(s.code));
      call.on("error", () => {});
      call.write(asBuffer(Uint8Array.of(index)));
    }
    const timeout = setTimeout(
      () => second.reject(new Error("the second stream never got its message")),
      5_000,
    );
    try {
      assert.equal(await second.promise, grpc.status.OK);
    } finally {
      clearTimeout(timeout);
    }
    assert.deepEqual(received[1], [new Uint8Array(big)]);
  } finally {
    client.close();
    await server.close(0);
  }
});
