import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { releaseClosedStreams } from "./closed_stream_release.ts";
import { runGcProbe } from "./_gc_probe.ts";

/** Runs the probe (it needs V8's `gc`, so in a process of its own) and returns what it found. */
function probe(way: "cancel" | "drop"): Promise<{ streams: number; closed: number; alive: number }> {
  return runGcProbe("./_closed_streams_probe.ts", [way, "16", String(1024 * 1024)]);
}

Deno.test("A gRPC server lets go of streams the client cancelled while a 1 MiB answer was queued", async () => {
  assert.deepEqual(await probe("cancel"), { streams: 16, closed: 16, alive: 0 });
});

Deno.test("A gRPC server lets go of streams whose connection went away while a 1 MiB answer was queued", async () => {
  assert.deepEqual(await probe("drop"), { streams: 16, closed: 16, alive: 0 });
});

/** The runtime's one symbol for every stream's native handle. */
const K_HANDLE = Symbol("kHandle");

/** A server stream as the runtime shapes it: its native handle under a symbol described `kHandle`. */
function fakeStream(shutdownResult: number) {
  const stream = new EventEmitter() as EventEmitter & Record<symbol, unknown>;
  const handle = { shutdown: (_request: object) => shutdownResult };
  stream[K_HANDLE] = handle;
  return { stream, handle };
}

Deno.test("releaseClosedStreams detaches a shutdown still held when its stream closes, and one made after", () => {
  const server = new EventEmitter();
  releaseClosedStreams(server);
  const held = fakeStream(0);
  server.emit("stream", held.stream);
  const streamHandle = {};
  const before = { handle: streamHandle, callback: () => {} };
  assert.equal(held.handle.shutdown(before), 0);
  assert.equal(before.handle, streamHandle, "an open stream's request is untouched");
  held.stream.emit("close");
  assert.notEqual(before.handle, streamHandle);
  const after = { handle: streamHandle, callback: () => {} };
  held.handle.shutdown(after);
  assert.notEqual(after.handle, streamHandle);
  after.callback();

  const done = fakeStream(1);
  server.emit("stream", done.stream);
  const completed = { handle: streamHandle };
  done.handle.shutdown(completed);
  done.stream.emit("close");
  assert.equal(completed.handle, streamHandle, "a request the runtime completed at once is not held");
});

Deno.test("releaseClosedStreams leaves a stream without the runtime's handle as it is", () => {
  const server = new EventEmitter();
  releaseClosedStreams(server);
  const stream = new EventEmitter();
  server.emit("stream", stream);
  assert.equal(stream.listenerCount("close"), 0);
});
