/**
 * The benchmark's baseline: an ADS server that only replays captured responses as raw bytes over grpc-js
 * with identity serializers. It answers each new or changed watch with the captured response of its type,
 * ignores ACKs, and on the `push` command writes every captured response to every stream, at most
 * `--throttle` streams at a time. What it costs is the floor of any push of the same bytes. With `--delta` it
 * serves incremental streams instead: a request that subscribes (or opens a type) gets the captured delta
 * response of its type, an ACK nothing.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-env bench/baseline_server.ts \
 *     --captured DIR [--pushes DIR] [--throttle 100] [--delta]
 *
 * `--pushes DIR` holds small push responses (`EDS.bin`, `RDS.bin`); `pushOne` writes one of them once to every
 * stream, the floor per message of a push of that type, and `pushOneRaw` the same to the HTTP/2 streams
 * directly, past grpc-js.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { parseArgs } from "node:util";
import type * as grpc from "@grpc/grpc-js";
import { decodeDeltaDiscoveryRequest, decodeDiscoveryRequest } from "../proto/discovery_request.ts";
import { TYPE_URL } from "../proto/type_urls.ts";
import { ADS_SERVICE_DEFINITION } from "../proto/ads_service.ts";
import { startGrpcServer } from "../shared/grpc/grpc_server.ts";
import { baseServerCall } from "../shared/grpc/base_server_call.ts";
import { GRPC_PREFIX_BYTES, writeGrpcPrefix } from "../proto/grpc_prefix.ts";
import { silentLogger } from "../shared/log/logger.ts";
import { jsonLines } from "./agent_protocol.ts";
import { epochMs } from "./mesh_fixture.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    captured: { type: "string" },
    throttle: { type: "string", default: "100" },
    delta: { type: "boolean", default: false },
    pushes: { type: "string" },
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
function serveWith(call: Call, answers: (bytes: Buffer) => string | undefined): void {
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
  const watched = new Map<string, string>();
  serveWith(call, (bytes) => {
    const request = decodeDiscoveryRequest(bytes);
    const names = [...request.resource_names].sort().join("\n");
    if (watched.get(request.type_url) === names) return undefined;
    watched.set(request.type_url, names);
    return request.type_url;
  });
}

/** Serves an incremental stream: each subscribing request gets its type's captured response. */
function serveDelta(call: Call): void {
  serveWith(call, (bytes) => {
    const request = decodeDeltaDiscoveryRequest(bytes);
    const isAck = request.response_nonce !== "" && request.resource_names_subscribe.length === 0;
    return isAck ? undefined : request.type_url;
  });
}

/**
 * Writes one framed message (its gRPC prefix in front) to every stream's HTTP/2 stream directly, past grpc-js,
 * `throttle` streams at a time: what a leaner write path (issue #32, item 3) could cost at best per message.
 * A stream whose call cannot be read is skipped (and not counted).
 */
async function pushAllRaw(throttle: number, message: Buffer): Promise<number> {
  const frame = Buffer.alloc(GRPC_PREFIX_BYTES + message.length);
  message.copy(frame, GRPC_PREFIX_BYTES);
  writeGrpcPrefix(frame, 0, message.length);
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

if (import.meta.main) {
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
  const port = server.port;
  const encoder = new TextEncoder();
  const reply = (value: unknown) => Deno.stdout.writeSync(encoder.encode(JSON.stringify(value) + "\n"));
  reply({ port });
  for await (const command of jsonLines(Deno.stdin.readable)) {
    if (command.cmd === "push") {
      const started = epochMs();
      const count = await pushAll(Number(flags.throttle), ORDER.map(([, typeUrl]) => captured.get(typeUrl)!));
      reply({ pushed: count, started, ms: epochMs() - started });
    } else if (command.cmd === "pushOne" || command.cmd === "pushOneRaw") {
      const response = pushResponses.get(String(command.short));
      if (response === undefined) {
        reply({ error: `No captured push response "${String(command.short)}": expected one of --pushes` });
        continue;
      }
      const started = epochMs();
      const count = command.cmd === "pushOneRaw"
        ? await pushAllRaw(Number(flags.throttle), response)
        : await pushAll(Number(flags.throttle), [response]);
      reply({ pushed: count, started, ms: epochMs() - started });
    } else if (command.cmd === "close") {
      break;
    } else {
      reply({ error: `Unknown command "${String(command.cmd)}": expected push or close` });
    }
  }
  await server.close(0);
  Deno.exit(0);
}
