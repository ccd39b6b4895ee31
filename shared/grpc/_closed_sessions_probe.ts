/**
 * A separate process (it needs V8's `gc`) that shows whether a gRPC server started by `startGrpcServer` lets
 * go of the sessions of connections that have closed:
 *
 *   deno run --v8-flags=--expose-gc --allow-net=127.0.0.1 --allow-env --allow-read \
 *     shared/grpc/_closed_sessions_probe.ts CONNECTIONS BYTES
 *
 * A `node:http2` client opens CONNECTIONS connections one after another, one stream on each; the server
 * answers its request with a message of BYTES, which the client reads before closing the connection. Once
 * every server session has closed and a few full collections ran, prints `{"sessions":N,"closed":N,"alive":K}`:
 * K server sessions are still reachable. (The client's sessions share the process, so its heap is no measure of
 * the server's; `bench/h2_session_memory.ts` measures that.)
 *
 * @module
 */
import { Buffer } from "node:buffer";
import http2 from "node:http2";
import { collectFully, PROBE_PATH, startAnsweringServer } from "./_gc_probe.ts";

const [connectionsArg, bytesArg] = Deno.args;
const connections = Number(connectionsArg);
const bytes = Number(bytesArg);
if (!(connections > 0) || !(bytes > 0)) {
  console.log(JSON.stringify({ error: "Usage: --v8-flags=--expose-gc … CONNECTIONS BYTES" }));
  Deno.exit(2);
}

const sessions: WeakRef<object>[] = [];
let closed = 0;
const server = await startAnsweringServer(bytes, (stream) => {
  const session = stream.session!;
  sessions.push(new WeakRef(session));
  session.once("close", () => closed++);
});

const request = Buffer.from([0, 0, 0, 0, 1, 0x2a]);
/** One connection with one stream, closed by the client once the whole answer has arrived. */
function exchange(): Promise<void> {
  const { promise, resolve } = Promise.withResolvers<void>();
  const client = http2.connect(`http://127.0.0.1:${server.port}`);
  client.on("error", () => {});
  const stream = client.request({
    ":method": "POST",
    ":path": PROBE_PATH,
    "content-type": "application/grpc",
    te: "trailers",
  });
  stream.on("error", () => {});
  let received = 0;
  stream.on("data", (chunk: Buffer) => {
    received += chunk.length;
    if (received < 5 + bytes) return;
    client.destroy();
    resolve();
  });
  stream.write(request);
  return promise;
}

for (let i = 0; i < connections; i++) await exchange();
const deadline = Date.now() + 10_000;
while (closed < connections && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
await collectFully();
const alive = sessions.filter((ref) => ref.deref() !== undefined).length;
console.log(JSON.stringify({ sessions: connections, closed, alive }));
await server.close();
Deno.exit(0);
