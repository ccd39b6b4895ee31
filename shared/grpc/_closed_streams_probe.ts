/**
 * A separate process (it needs V8's `gc`) that shows whether a gRPC server started by `startGrpcServer` lets
 * go of streams that closed while a large message was still queued on them:
 *
 *   deno run --v8-flags=--expose-gc --allow-net=127.0.0.1 --allow-env --allow-read \
 *     shared/grpc/_closed_streams_probe.ts WAY STREAMS BYTES
 *
 * A `node:http2` client opens STREAMS streams on one connection, sends one request on each and never reads;
 * the server answers each with a message of BYTES, which stays queued. The client then leaves by WAY:
 * `cancel` (RST_STREAM(CANCEL) on every stream, the connection kept) or `drop` (the connection destroyed).
 * Once every server stream has closed and a few full collections ran, prints
 * `{"streams":N,"alive":K}`: K server streams are still reachable.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import http2 from "node:http2";
import { collectFully, PROBE_PATH, startAnsweringServer } from "./_gc_probe.ts";

const [way, streamsArg, bytesArg] = Deno.args;
const streams = Number(streamsArg);
const bytes = Number(bytesArg);
if (!["cancel", "drop"].includes(way) || !(streams > 0) || !(bytes > 0)) {
  console.log(JSON.stringify({ error: "Usage: --v8-flags=--expose-gc … cancel|drop STREAMS BYTES" }));
  Deno.exit(2);
}

const serverStreams: WeakRef<object>[] = [];
let closed = 0;
const server = await startAnsweringServer(bytes, (stream) => {
  serverStreams.push(new WeakRef(stream));
  stream.once("close", () => closed++);
});

const session = http2.connect(`http://127.0.0.1:${server.port}`);
session.on("error", () => {});
const request = Buffer.from([0, 0, 0, 0, 1, 0x2a]);
const clientStreams: http2.ClientHttp2Stream[] = [];
let answered = 0;
const allAnswered = Promise.withResolvers<void>();
for (let i = 0; i < streams; i++) {
  const stream = session.request({
    ":method": "POST",
    ":path": PROBE_PATH,
    "content-type": "application/grpc",
    te: "trailers",
  });
  stream.on("error", () => {});
  stream.once("data", () => {
    stream.pause();
    if (++answered === streams) allAnswered.resolve();
  });
  stream.write(request);
  clientStreams.push(stream);
}
await allAnswered.promise;
if (way === "cancel") {
  for (const stream of clientStreams) stream.close(http2.constants.NGHTTP2_CANCEL);
} else {
  session.destroy();
}
clientStreams.length = 0;
const deadline = Date.now() + 10_000;
while (closed < streams && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
await collectFully();
const alive = serverStreams.filter((ref) => ref.deref() !== undefined).length;
console.log(JSON.stringify({ streams, closed, alive }));
if (way === "cancel") session.destroy();
await server.close();
Deno.exit(0);
