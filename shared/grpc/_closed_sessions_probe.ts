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
import type * as grpc from "@grpc/grpc-js";
import { startGrpcServer } from "./grpc_server.ts";
import { silentLogger } from "../log/logger.ts";
import { bytesDuplexDefinition } from "./_bytes_duplex.ts";

const [connectionsArg, bytesArg] = Deno.args;
const connections = Number(connectionsArg);
const bytes = Number(bytesArg);
const collect = (globalThis as { gc?: () => void }).gc;
if (collect === undefined || !(connections > 0) || !(bytes > 0)) {
  console.log(JSON.stringify({ error: "Usage: --v8-flags=--expose-gc … CONNECTIONS BYTES" }));
  Deno.exit(2);
}
const PATH = "/test.Probe/Stream";
const definition = bytesDuplexDefinition(PATH);

async function collectFully(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    collect!();
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sessions: WeakRef<object>[] = [];
let closed = 0;
const server = await startGrpcServer({
  name: "Probe",
  listen: { tcp: "127.0.0.1:0", flag: "--probeAddr" },
  logger: silentLogger,
  services: [{
    definition,
    implementation: {
      Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
        // deno-lint-ignore no-explicit-any
        const session = ((call as any).call.stream as http2.ServerHttp2Stream).session!;
        sessions.push(new WeakRef(session));
        session.once("close", () => closed++);
        call.on("error", () => {});
        call.once("data", () => call.write(Buffer.alloc(bytes, 7)));
      },
    },
  }],
});

const request = Buffer.from([0, 0, 0, 0, 1, 0x2a]);
/** One connection with one stream, closed by the client once the whole answer has arrived. */
function exchange(): Promise<void> {
  const { promise, resolve } = Promise.withResolvers<void>();
  const client = http2.connect(`http://127.0.0.1:${server.port}`);
  client.on("error", () => {});
  const stream = client.request({
    ":method": "POST",
    ":path": PATH,
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
