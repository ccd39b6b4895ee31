import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type * as grpc from "@grpc/grpc-js";
import { baseServerCall } from "./base_server_call.ts";
import {
  clientCallDecoder,
  releaseClientDecodedChunks,
  releaseDecodedChunks,
} from "./decoded_chunk_release.ts";
import { ECHO_DEFINITION, EchoTestClient, startEchoServer } from "./_test_echo_service.ts";

/** What a stream's decoder still references once every message sent has been delivered. */
interface Kept {
  readonly delivered: readonly Buffer[];
  readonly partialChunks: number;
  readonly flagBufferBytes: number;
}

/** What `decoder` (grpc-js's) references of the messages it delivered. */
function keptBy(decoder: unknown, delivered: readonly Buffer[]): Kept {
  // deno-lint-ignore no-explicit-any
  const d = decoder as any;
  return {
    delivered,
    partialChunks: d.readPartialMessage.length,
    flagBufferBytes: d.readCompressFlag.buffer.byteLength,
  };
}

/**
 * Starts an echo server whose held streams run `hold`, opens one held stream to it, and resolves with what
 * `use` resolves with; the client and server are closed after.
 */
async function overHeldStream<T>(
  hold: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => void,
  use: (call: grpc.ClientDuplexStream<Buffer, Buffer>) => Promise<T>,
): Promise<T> {
  const { server } = await startEchoServer({
    services: [{ definition: ECHO_DEFINITION, implementation: { Hold: hold } }],
  });
  const client = new EchoTestClient(server.address);
  try {
    const call = client.hold();
    const result = await use(call);
    call.end();
    return result;
  } finally {
    client.close();
    await server.close(0);
  }
}

/** Sends `messages` on one stream; resolves with them as delivered and what the server's decoder kept after. */
function sendAndInspect(messages: readonly Buffer[]): Promise<Kept> {
  const delivered: Buffer[] = [];
  const all = Promise.withResolvers<Kept>();
  return overHeldStream((call) => {
    const decoder = baseServerCall(call)?.decoder;
    call.on("data", (message: Buffer) => {
      delivered.push(message);
      // Read once the stream is quiet: a message is handed on after the decoder may have begun the next.
      if (delivered.length === messages.length) all.resolve(keptBy(decoder, delivered));
    });
    call.on("error", () => {});
  }, (call) => {
    for (const message of messages) call.write(message);
    return all.promise;
  });
}

Deno.test("A server stream's decoder keeps none of a message's frames once the message is delivered", async () => {
  // 200 KB spans a dozen HTTP/2 DATA frames, each a buffer of its own: they are decoded across several writes.
  const large = Buffer.alloc(200_000, 0x61);
  const small = Buffer.from("ack");
  const kept = await sendAndInspect([large, small, large]);
  assert.deepEqual(kept.delivered.map((m) => m.length), [200_000, 3, 200_000]);
  assert.ok(
    kept.delivered[0].equals(large) && kept.delivered[1].equals(small) && kept.delivered[2].equals(large),
  );
  assert.equal(kept.partialChunks, 0, "the decoder still lists the last message's chunks");
  assert.ok(kept.flagBufferBytes <= 1, `the decoder holds a ${kept.flagBufferBytes}-byte frame`);
});

Deno.test("releaseDecodedChunks leaves a call it cannot find a decoder in as it is", () => {
  const call = { call: { stream: {}, decoder: { write: "not a function" } } };
  assert.equal(releaseDecodedChunks(call), false);
  assert.equal(call.call.decoder.write, "not a function");
  assert.equal(releaseDecodedChunks({}), false);
});

/**
 * A server answers one client stream with `messages`; resolves with them as the client received them and what
 * the client's decoder kept after, with or without `releaseClientDecodedChunks`.
 */
function receiveAndInspect(messages: readonly Buffer[], release: boolean): Promise<Kept> {
  return overHeldStream((call) => {
    call.once("data", () => {
      for (const message of messages) call.write(message);
    });
    call.on("error", () => {});
  }, async (call) => {
    if (release) releaseClientDecodedChunks(call);
    const delivered: Buffer[] = [];
    const all = Promise.withResolvers<void>();
    call.on("data", (message: Buffer) => {
      delivered.push(message);
      if (delivered.length === messages.length) all.resolve();
    });
    call.write(Buffer.from("go"));
    // The last response is its stream's last: nothing is decoded after it, and the decoder stays as it is.
    await all.promise;
    return keptBy(clientCallDecoder(call), delivered);
  });
}

Deno.test("A client stream's decoder keeps none of a response's frames once the response is delivered", async () => {
  const large = Buffer.alloc(200_000, 0x62);
  const small = Buffer.from("ok");
  const kept = await receiveAndInspect([small, large], true);
  assert.deepEqual(kept.delivered.map((m) => m.length), [2, 200_000]);
  assert.ok(kept.delivered[0].equals(small) && kept.delivered[1].equals(large));
  assert.equal(kept.partialChunks, 0, "the decoder still lists the last response's chunks");
  assert.ok(kept.flagBufferBytes <= 1, `the decoder holds a ${kept.flagBufferBytes}-byte frame`);

  // Without it, grpc-js keeps them: the walk reaches the decoder that holds them.
  const unreleased = await receiveAndInspect([small, large], false);
  assert.ok(unreleased.partialChunks > 1, `grpc-js kept ${unreleased.partialChunks} chunks`);
});

Deno.test("clientCallDecoder finds no decoder in a stream shaped otherwise", () => {
  assert.equal(clientCallDecoder({}), undefined);
  assert.equal(clientCallDecoder({ call: { nextCall: { child: { underlyingCalls: [] } } } }), undefined);
  const loop: Record<string, unknown> = {};
  loop.nextCall = loop;
  assert.equal(clientCallDecoder({ call: loop }), undefined);
});
