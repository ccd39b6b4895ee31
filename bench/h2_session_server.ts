/**
 * The server side of `bench/h2_session_memory.ts`: holds client connections and their one long-lived stream
 * each, on one of three layers, so that what a connection costs can be split by layer.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-env [--allow-ffi=/lib,/usr/lib,/lib64,/usr/lib64] \
 *     --v8-flags=--expose-gc bench/h2_session_server.ts --layer grpc|h2|tcp [--options JSON] \\
 *     [--pushBytes 820]
 *
 * `grpc`: a bare grpc-js server with identity serializers and one bidi method (ADS's path); `--options` are its
 * channel options; with `--sliceBytes` pushes go through the servers' own send path (`sendPrefixedWithoutCopy`,
 * slices of that size). `h2`: `node:http2` alone, each stream answered with headers and held; `--options` are the
 * server's `settings` and session options. `tcp`: `node:net` sockets that read and are held. Commands on stdin
 * (JSON lines): `usage` (after a full collection), `push` (a small framed message to every stream), `trim`
 * (glibc's `malloc_trim`), `drop` (close every connection); each is answered with one JSON line.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import http2 from "node:http2";
import net from "node:net";
import { parseArgs } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { openMallocTrim } from "../shared/process/malloc_trim.ts";
import { sendPrefixedWithoutCopy } from "../shared/grpc/prefixed_send.ts";
import { releaseClosedSessions } from "../shared/grpc/closed_session_release.ts";
import { jsonLines } from "./agent_protocol.ts";
import { ADS_SERVICE_DEFINITION } from "../proto/ads_service.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    layer: { type: "string", default: "grpc" },
    options: { type: "string", default: "{}" },
    pushBytes: { type: "string", default: "820" },
    pushChunk: { type: "string" },
    pushConcurrency: { type: "string", default: "0" },
    sliceBytes: { type: "string" },
    release: { type: "boolean", default: false },
  },
});
const options = JSON.parse(flags.options!) as Record<string, unknown>;

/** The gRPC method the streams open, as an ADS stream does. */
/** A push behind its 5-byte gRPC prefix; by default the size of a small EDS response. */
const PUSH = (() => {
  const size = Number(flags.pushBytes);
  const bytes = Buffer.alloc(5 + size, 0x61);
  bytes.writeUInt8(0, 0);
  bytes.writeUInt32BE(size, 1);
  return bytes;
})();

/** Something that can take a push and be closed. */
interface Held {
  push(): Promise<void>;
  close(): void;
}
const held = new Set<Held>();

function startGrpc(): Promise<number> {
  const server = new grpc.Server(options as grpc.ServerOptions);
  server.addService(ADS_SERVICE_DEFINITION as unknown as grpc.ServiceDefinition, {
    StreamAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      if (flags.sliceBytes !== undefined) {
        sendPrefixedWithoutCopy(call, { sliceBytes: Number(flags.sliceBytes) });
      }
      const entry: Held = {
        push: () => new Promise((resolve) => call.write(PUSH.subarray(5), () => resolve())),
        close: () => call.end(),
      };
      call.once("data", () => held.add(entry));
      call.on("error", () => held.delete(entry));
      call.on("end", () => held.delete(entry));
    },
  });
  return new Promise((resolve, reject) => {
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, port) => {
      if (error) return reject(error);
      // grpc-js keeps its HTTP/2 servers in a private map, as shared/grpc/grpc_server.ts reads it.
      const http2Servers =
        (server as unknown as { http2Servers: Map<http2.Http2Server, unknown> }).http2Servers;
      if (flags.release) {
        for (const http2Server of http2Servers.keys()) releaseClosedSessions(http2Server);
      }
      resolve(port);
    });
  });
}

/**
 * Writes `bytes` in pieces of `--pushChunk` bytes (default: whole), each after the last one's callback, so the
 * runtime never holds more than one piece of it; resolves when the last is written.
 */
async function writeChunks(stream: http2.ServerHttp2Stream, bytes: Buffer): Promise<void> {
  const chunk = Number(flags.pushChunk ?? bytes.length);
  for (let offset = 0; offset < bytes.length; offset += chunk) {
    const piece = bytes.subarray(offset, offset + chunk);
    await new Promise<void>((resolve) => stream.write(piece, () => resolve()));
  }
}

function startH2(): Promise<number> {
  const server = http2.createServer(options as http2.ServerOptions);
  if (flags.release) releaseClosedSessions(server);
  server.on("stream", (stream) => {
    stream.respond({ ":status": 200, "content-type": "application/grpc" });
    const entry: Held = {
      push: () => writeChunks(stream, PUSH),
      close: () => stream.session?.close(),
    };
    stream.once("data", () => held.add(entry));
    stream.on("data", () => {});
    stream.on("close", () => held.delete(entry));
    stream.on("error", () => held.delete(entry));
  });
  return listen(server);
}

function startTcp(): Promise<number> {
  const server = net.createServer((socket) => {
    const entry: Held = {
      push: () => new Promise((resolve) => socket.write(PUSH, () => resolve())),
      close: () => socket.destroy(),
    };
    socket.once("data", () => held.add(entry));
    socket.on("data", () => {});
    socket.on("close", () => held.delete(entry));
    socket.on("error", () => held.delete(entry));
  });
  return listen(server);
}

function listen(server: net.Server | http2.Http2Server): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port));
  });
}

/** Pushes to every entry, at most `concurrency` writes outstanding at once. */
async function pushAll(entries: Held[], concurrency: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < entries.length) await entries[next++].push();
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, entries.length) }, worker));
}

const starts: Record<string, () => Promise<number>> = { grpc: startGrpc, h2: startH2, tcp: startTcp };
const start = starts[flags.layer!];
if (!start) throw new TypeError(`Invalid --layer "${flags.layer}": expected grpc, h2 or tcp`);
const port = await start();
const trimBinding = openMallocTrim();
const encoder = new TextEncoder();
const reply = (value: unknown) => Deno.stdout.writeSync(encoder.encode(JSON.stringify(value) + "\n"));
const collect = (globalThis as { gc?: () => void }).gc ?? (() => {});
reply({ port, pid: Deno.pid });

for await (const command of jsonLines(Deno.stdin.readable)) {
  switch (command.cmd) {
    case "usage":
      collect();
      reply({ held: held.size, ...Deno.memoryUsage() });
      break;
    case "push":
      await pushAll([...held], Number(flags.pushConcurrency) || held.size);
      reply({ pushed: held.size });
      break;
    case "trim":
      reply({ trimmed: "trim" in trimBinding ? await trimBinding.trim() : trimBinding.unavailable });
      break;
    case "drop":
      for (const entry of held) entry.close();
      held.clear();
      reply({ dropped: true });
      break;
    default:
      reply({ error: `Unknown command "${String(command.cmd)}"` });
  }
}
// End of input: the held servers would keep the process alive.
Deno.exit(0);
