import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { OwnH2Server } from "./h2_server.ts";
import type { H2Stream } from "./h2_stream.ts";

const identity = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** A bidirectional method on raw bytes; the own server takes every stream as one, whatever its path. */
const ECHO_CLIENT = grpc.makeClientConstructor({
  Chat: {
    path: "/bench.Test/Chat",
    requestStream: true,
    responseStream: true,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
}, "Test");

Deno.test("the own HTTP/2 server reads a grpc-js client's message and sends it a message and its status", async () => {
  const received: string[] = [];
  const server = OwnH2Server.listen((stream: H2Stream) => {
    stream.onMessage = (message) => {
      received.push(new TextDecoder().decode(message));
      stream.write(new TextEncoder().encode(`answer to ${received.at(-1)}`));
    };
    stream.onEnd = () => stream.end(0);
  });
  const client = new ECHO_CLIENT(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
  try {
    // deno-lint-ignore no-explicit-any
    const call = (client as any).Chat() as grpc.ClientDuplexStream<Uint8Array, Uint8Array>;
    const messages: string[] = [];
    const status = new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
    call.on("data", (bytes: Uint8Array) => {
      messages.push(new TextDecoder().decode(bytes));
      call.end();
    });
    call.on("error", () => {});
    call.write(new TextEncoder().encode("hello"));
    const { code } = await status;
    assert.equal(code, grpc.status.OK);
    assert.deepEqual(messages, ["answer to hello"]);
    assert.deepEqual(received, ["hello"]);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("the own HTTP/2 server's trailers-only status reaches a grpc-js client with its message", async () => {
  const server = OwnH2Server.listen((stream: H2Stream) =>
    stream.end(grpc.status.NOT_FOUND, "no stream ü here")
  );
  const client = new ECHO_CLIENT(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
  try {
    // deno-lint-ignore no-explicit-any
    const call = (client as any).Chat() as grpc.ClientDuplexStream<Uint8Array, Uint8Array>;
    call.on("error", () => {});
    const status = await new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
    assert.deepEqual([status.code, status.details], [grpc.status.NOT_FOUND, "no stream ü here"]);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("a grpc-js client's cancel reaches the own HTTP/2 server as the stream's close", async () => {
  let closed!: () => void;
  const closedSeen = new Promise<void>((resolve) => closed = resolve);
  const server = OwnH2Server.listen((stream: H2Stream) => {
    stream.onMessage = () => stream.write(new Uint8Array([1]));
    stream.onClose = closed;
  });
  const client = new ECHO_CLIENT(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
  try {
    // deno-lint-ignore no-explicit-any
    const call = (client as any).Chat() as grpc.ClientDuplexStream<Uint8Array, Uint8Array>;
    call.on("error", () => {});
    call.on("data", () => call.cancel());
    call.write(new Uint8Array([0]));
    await closedSeen;
  } finally {
    client.close();
    await server.close();
  }
});
