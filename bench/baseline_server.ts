/**
 * The benchmark's baseline: an ADS server that only replays captured responses as raw bytes over grpc-js
 * with identity serializers. It answers each new or changed watch with the captured response of its type,
 * ignores ACKs, and on the `push` command writes every captured response to every stream, at most
 * `--throttle` streams at a time. What it costs is the floor of any push of the same bytes. With `--delta` it
 * serves incremental streams instead: a request that subscribes (or opens a type) gets the captured delta
 * response of its type, an ACK nothing.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-env bench/baseline_server.ts \
 *     --captured DIR [--pushes DIR] [--throttle 100] [--delta] [--own-h2]
 *
 * `--pushes DIR` holds small push responses (`EDS.bin`, `RDS.bin`); `pushOne` writes one of them once to every
 * stream, the floor per message of a push of that type, and `pushOneRaw` the same to the HTTP/2 streams
 * directly, past grpc-js. With `--own-h2` the same streams are served by the benchmark's own HTTP/2 server
 * (`h2_server.ts`) instead of grpc-js over `node:http2`: `pushOne` then writes every stream's DATA frames in
 * one turn, each connection's frames leaving in one write (no `--throttle`: nothing waits per stream).
 * `--profile-push FILE` (with `--allow-sys` and leave to write FILE) saves a CPU profile of the first `pushOne`
 * of EDS, `--profile-seconds` long, before answering it.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { parseArgs } from "node:util";
import type * as grpc from "@grpc/grpc-js";
import { TYPE_URL } from "../proto/type_urls.ts";
import { ADS_SERVICE_DEFINITION } from "../proto/ads_service.ts";
import { startGrpcServer } from "../shared/grpc/grpc_server.ts";
import { baseServerCall } from "../shared/grpc/base_server_call.ts";
import { GRPC_PREFIX_BYTES, writeGrpcPrefix } from "../proto/grpc_prefix.ts";
import { silentLogger } from "../shared/log/logger.ts";
import { jsonLines } from "./agent_protocol.ts";
import { epochMs } from "./mesh_fixture.ts";
import { InspectorProfiler } from "../discovery/http/inspector_profiler.ts";
import { type Answerer, deltaAnswerer, sotwAnswerer } from "./replay_answers.ts";
import { OwnH2Server } from "./h2_server.ts";
import type { H2Stream } from "./h2_stream.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    captured: { type: "string" },
    throttle: { type: "string", default: "100" },
    delta: { type: "boolean", default: false },
    pushes: { type: "string" },
    "own-h2": { type: "boolean", default: false },
    "profile-push": { type: "string" },
    "profile-seconds": { type: "string", default: "4" },
  },
});
if (flags.captured === undefined) {
  throw new TypeError("Missing --captured: expected the dir of *.bin responses");
}

/** Captured responses in push order. */
const ORDER: [string, string][] = [
  ["CDS", TYPE_URL.cluster],
  ["EDS", TYPE_URL.endpoint],
  ["LDS", TYPE_URL.listener],
  ["RDS", TYPE_URL.route],
];
const captured = new Map<string, Buffer>();
for (const [short, typeUrl] of ORDER) {
  captured.set(typeUrl, Buffer.from(await Deno.readFile(`${flags.captured}/${short}.bin`)));
}

/** Small push responses (an edit's), by short type name, for the per-message floor. */
const pushResponses = new Map<string, Buffer>();
if (flags.pushes !== undefined) {
  for (const [short] of ORDER) {
    try {
      pushResponses.set(short, Buffer.from(await Deno.readFile(`${flags.pushes}/${short}.bin`)));
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
}

type Call = grpc.ServerDuplexStream<Buffer, Buffer>;
const streams = new Set<Call>();

function write(call: Call, bytes: Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (call.destroyed || call.writableEnded) return resolve();
    call.write(bytes, () => resolve());
  });
}

/**
 * Serves a stream: `answers` says whether a request (raw bytes) is answered, and with which type's captured
 * response; the stream is tracked for pushes until it ends.
 */
function serveWith(call: Call, answers: Answerer): void {
  streams.add(call);
  call.on("data", (bytes: Buffer) => {
    const typeUrl = answers(bytes);
    const response = typeUrl === undefined ? undefined : captured.get(typeUrl);
    if (response !== undefined) void write(call, response);
  });
  const drop = () => streams.delete(call);
  call.on("end", () => {
    drop();
    call.end();
  });
  call.on("error", drop);
  call.on("close", drop);
}

/** Serves a state-of-the-world stream: a request whose names differ from the type's last ones is answered. */
function serve(call: Call): void {
  serveWith(call, sotwAnswerer());
}

/** Serves an incremental stream: each subscribing request gets its type's captured response. */
function serveDelta(call: Call): void {
  serveWith(call, deltaAnswerer());
}

/** A message with its gRPC prefix in front, as one buffer to write to many streams. */
function framed(message: Uint8Array): Uint8Array {
  const frame = new Uint8Array(GRPC_PREFIX_BYTES + message.length);
  writeGrpcPrefix(frame, 0, message.length);
  frame.set(message, GRPC_PREFIX_BYTES);
  return frame;
}

/** Streams of the own HTTP/2 server, and the captured responses framed once for all of them. */
const ownStreams = new Set<H2Stream>();
const capturedFramed = new Map([...captured].map(([typeUrl, bytes]) => [typeUrl, framed(bytes)]));

/** Serves a stream of the own HTTP/2 server as `serve`/`serveDelta` serve a grpc-js one. */
function serveOwnH2(stream: H2Stream): void {
  const answers = flags.delta ? deltaAnswerer() : sotwAnswerer();
  ownStreams.add(stream);
  stream.onMessage = (bytes) => {
    // As a Buffer, as grpc-js hands requests over: protobufjs then reads strings natively (utf8Slice).
    const typeUrl = answers(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
    const frame = typeUrl === undefined ? undefined : capturedFramed.get(typeUrl);
    if (frame !== undefined) stream.writeFramed(frame);
  };
  stream.onEnd = () => {
    ownStreams.delete(stream);
    stream.end(0);
  };
  stream.onClose = () => ownStreams.delete(stream);
}

/**
 * Writes each framed response to every stream of the own HTTP/2 server in this turn, and resolves once every
 * connection has written them: the streams written to.
 */
async function pushAllOwnH2(server: OwnH2Server, frames: readonly Uint8Array[]): Promise<number> {
  let written = 0;
  for (const stream of ownStreams) {
    let all = true;
    for (const frame of frames) all = stream.writeFramed(frame) && all;
    if (all) written++;
  }
  await server.drained();
  return written;
}

/**
 * Writes one framed message (its gRPC prefix in front) to every stream's HTTP/2 stream directly, past grpc-js,
 * `throttle` streams at a time: what a leaner write path (issue #32, item 3) could cost at best per message.
 * A stream whose call cannot be read is skipped (and not counted).
 */
async function pushAllRaw(throttle: number, message: Buffer): Promise<number> {
  const frame = Buffer.from(framed(message).buffer);
  const queue = [...streams];
  let written = 0;
  const worker = async () => {
    for (let call = queue.shift(); call !== undefined; call = queue.shift()) {
      const stream = baseServerCall(call)?.stream as
        | { write(chunk: Buffer, callback: () => void): boolean; writableEnded?: boolean }
        | undefined;
      if (stream === undefined || stream.writableEnded === true) continue;
      await new Promise<void>((resolve) => stream.write(frame, () => resolve()));
      written++;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, throttle) }, worker));
  return written;
}

/** Writes `responses` to every stream in order, `throttle` streams at a time. */
async function pushAll(throttle: number, responses: readonly Buffer[]): Promise<number> {
  const queue = [...streams];
  const worker = async () => {
    for (let call = queue.shift(); call !== undefined; call = queue.shift()) {
      for (const response of responses) await write(call, response);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, throttle) }, worker));
  return streams.size;
}

/** What the commands drive: pushes over grpc-js (`pushOneRaw`: past it) or over the own HTTP/2 server. */
interface ReplayTransport {
  readonly port: number;
  push(responses: readonly Buffer[]): Promise<number>;
  pushOne(command: string, response: Buffer): Promise<number>;
  close(): Promise<void>;
}

async function startGrpcJsReplay(throttle: number): Promise<ReplayTransport> {
  const server = await startGrpcServer({
    name: "baseline ADS",
    listen: { tcp: "127.0.0.1:0", flag: "--baseline" },
    services: [{
      definition: ADS_SERVICE_DEFINITION,
      implementation: {
        StreamAggregatedResources: flags.delta
          ? (call: Call) => call.destroy(new Error("Only delta is replayed (--delta)"))
          : serve,
        DeltaAggregatedResources: flags.delta
          ? serveDelta
          : (call: Call) => call.destroy(new Error("Delta is not replayed without --delta")),
      },
    }],
    logger: silentLogger,
  });
  return {
    port: server.port,
    push: (responses) => pushAll(throttle, responses),
    pushOne: (command, response) =>
      command === "pushOneRaw" ? pushAllRaw(throttle, response) : pushAll(throttle, [response]),
    close: () => server.close(0),
  };
}

function startOwnH2Replay(): ReplayTransport {
  const server = OwnH2Server.listen(serveOwnH2);
  return {
    port: server.port,
    push: (responses) => pushAllOwnH2(server, responses.map(framed)),
    pushOne: (command, response) => {
      if (command === "pushOneRaw") {
        return Promise.reject(new TypeError("Invalid pushOneRaw with --own-h2: expected pushOne"));
      }
      return pushAllOwnH2(server, [framed(response)]);
    },
    close: () => server.close(),
  };
}

if (import.meta.main) {
  const transport = flags["own-h2"] ? startOwnH2Replay() : await startGrpcJsReplay(Number(flags.throttle));
  const encoder = new TextEncoder();
  const reply = (value: unknown) => Deno.stdout.writeSync(encoder.encode(JSON.stringify(value) + "\n"));
  reply({ port: transport.port });
  for await (const command of jsonLines(Deno.stdin.readable)) {
    if (command.cmd === "push") {
      const started = epochMs();
      const count = await transport.push(ORDER.map(([, typeUrl]) => captured.get(typeUrl)!));
      reply({ pushed: count, started, ms: epochMs() - started });
    } else if (command.cmd === "pushOne" || command.cmd === "pushOneRaw") {
      const response = pushResponses.get(String(command.short));
      if (response === undefined) {
        reply({ error: `No captured push response "${String(command.short)}": expected one of --pushes` });
        continue;
      }
      const profileFile = command.short === "EDS" ? flags["profile-push"] : undefined;
      // The first EDS push only: the profile starts (a few turns of the inspector) before the push does.
      const profile = profileFile === undefined
        ? undefined
        : new InspectorProfiler().cpuProfile(Number(flags["profile-seconds"]));
      flags["profile-push"] = undefined;
      if (profile !== undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      const started = epochMs();
      try {
        const count = await transport.pushOne(command.cmd, response);
        const ms = epochMs() - started;
        if (profile !== undefined) await Deno.writeTextFile(profileFile!, JSON.stringify(await profile));
        reply({ pushed: count, started, ms });
      } catch (error) {
        reply({ error: (error as Error).message });
      }
    } else if (command.cmd === "close") {
      break;
    } else {
      reply({ error: `Unknown command "${String(command.cmd)}": expected push or close` });
    }
  }
  await transport.close();
  Deno.exit(0);
}
