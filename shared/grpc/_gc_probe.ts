/**
 * Test support for the probes that count what a gRPC server keeps of closed HTTP/2 streams and sessions: a
 * server that answers each call's first message with a message of a given size, a full collection, and the
 * test side that runs a probe in a process of its own (it needs V8's `gc`) and reads its last line.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type http2 from "node:http2";
import { fileURLToPath } from "node:url";
import type * as grpc from "@grpc/grpc-js";
import { type RunningGrpcServer, startGrpcServer } from "./grpc_server.ts";
import { silentLogger } from "../log/logger.ts";
import { bytesDuplexDefinition } from "./_bytes_duplex.ts";

/** The method the probe server serves. */
export const PROBE_PATH = "/test.Probe/Stream";

/** A gRPC server started by `startGrpcServer` whose calls each answer their first message with `bytes` bytes. */
export function startAnsweringServer(
  bytes: number,
  onStream: (stream: http2.ServerHttp2Stream) => void,
): Promise<RunningGrpcServer> {
  return startGrpcServer({
    name: "Probe",
    listen: { tcp: "127.0.0.1:0", flag: "--probeAddr" },
    logger: silentLogger,
    services: [{
      definition: bytesDuplexDefinition(PROBE_PATH),
      implementation: {
        Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
          // deno-lint-ignore no-explicit-any
          onStream((call as any).call.stream as http2.ServerHttp2Stream);
          call.on("error", () => {});
          call.once("data", () => call.write(Buffer.alloc(bytes, 7)));
        },
      },
    }],
  });
}

/** Runs V8's full collection a few times, letting the event loop turn between (finalisers, weak handles). */
export async function collectFully(): Promise<void> {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new TypeError("collectFully needs --v8-flags=--expose-gc");
  for (let i = 0; i < 4; i++) {
    collect();
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs the probe `script` (beside this file) with `args` and returns the JSON of its last line. */
export async function runGcProbe<T>(script: string, args: readonly string[]): Promise<T> {
  const output = await new Deno.Command("deno", {
    args: [
      "run",
      "--v8-flags=--expose-gc",
      "--allow-net=127.0.0.1",
      "--allow-env",
      "--allow-read",
      fileURLToPath(new URL(script, import.meta.url)),
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  assert.ok(output.success, `${text}\n${new TextDecoder().decode(output.stderr)}`);
  return JSON.parse(text.trim().split("\n").at(-1)!);
}
