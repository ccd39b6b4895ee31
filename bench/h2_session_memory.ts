/**
 * What one connected peer costs a server in memory, split by where it lives: N connections, each with one
 * long-lived stream (a small request in, a small push out, as an ADS stream with an EDS push), held by
 * `bench/h2_session_server.ts` in a child process on one layer (`grpc`: grpc-js, `h2`: `node:http2` alone,
 * `tcp`: sockets alone).
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-env --allow-run=deno,cat \
 *     bench/h2_session_memory.ts [--layer grpc] [--connections 2000] [--options JSON] [--clientSettings JSON] \
 *     [--cycles 1] [--pushBytes 820] [--pushes 1] [--requestBytes 200] \\
 *     [--pushChunk BYTES (h2: write each push in pieces)] \\
 *     [--pushConcurrency N (writes outstanding at once; 0: all)] \\
 *     [--sliceBytes N (grpc: the servers' paced send path, slices of N bytes)] \\
 *     [--release (grpc, h2: closed sessions detached from the runtime's handle, as startGrpcServer does)]
 *
 * Figures are taken before connecting, with every connection idle, after `--pushes` pushes to all, after `malloc_trim`,
 * and after every connection closed, `--cycles` times over (what closed connections leave shows as growth);
 * each is RSS from /proc/PID/smaps split into glibc's main arena (`[heap]`), other anonymous mappings (V8's
 * heap pages, thread arenas, mmapped chunks) and files, beside
 * `Deno.memoryUsage()` after a full collection. Per connection is the change from before, divided by N.
 * glibc tunables (`MALLOC_ARENA_MAX`, `GLIBC_TUNABLES`) set on this command reach the server through its
 * environment. Prints a table and one JSON line.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import http2 from "node:http2";
import net from "node:net";
import { parseArgs } from "node:util";
import { readProc, startChild } from "./bench_processes.ts";
import { SYSTEM_LIBRARY_DIRS } from "../shared/process/glibc_library.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    layer: { type: "string", default: "grpc" },
    connections: { type: "string", default: "2000" },
    options: { type: "string", default: "{}" },
    clientSettings: { type: "string", default: "{}" },
    concurrency: { type: "string", default: "100" },
    cycles: { type: "string", default: "1" },
    pushBytes: { type: "string", default: "820" },
    requestBytes: { type: "string", default: "200" },
    pushes: { type: "string", default: "1" },
    pushChunk: { type: "string" },
    pushConcurrency: { type: "string", default: "0" },
    sliceBytes: { type: "string" },
    release: { type: "boolean", default: false },
  },
});
const layer = flags.layer!;
const connections = Number(flags.connections);
const clientSettings = JSON.parse(flags.clientSettings!) as http2.Settings;

/** RSS of a process in KiB by kind of mapping, from /proc/PID/smaps. */
interface Mappings {
  heap: number;
  anon: number;
  file: number;
  total: number;
  /** Size of `[heap]`, touched or not: what the main arena has grown to. */
  heapSize: number;
}

function mappings(pid: number): Mappings {
  const result: Mappings = { heap: 0, anon: 0, file: 0, total: 0, heapSize: 0 };
  let kind: keyof Mappings = "anon";
  for (const line of readProc(`/proc/${pid}/smaps`).split("\n")) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const name = header[1];
      kind = name === "[heap]" ? "heap" : name === "" || name.startsWith("[") ? "anon" : "file";
      continue;
    }
    const size = /^Size:\s+(\d+) kB/.exec(line);
    if (size && kind === "heap") result.heapSize += Number(size[1]);
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) {
      result[kind] += Number(rss[1]);
      result.total += Number(rss[1]);
    }
  }
  return result;
}

/** One sample: smaps in KiB and `Deno.memoryUsage()` in bytes. */
interface Sample {
  readonly held: number;
  readonly smaps: Mappings;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
}

const server = startChild("h2_session_server.ts", [
  "--layer",
  layer,
  "--options",
  flags.options!,
  "--pushBytes",
  flags.pushBytes!,
  ...(flags.pushChunk ? ["--pushChunk", flags.pushChunk] : []),
  "--pushConcurrency",
  flags.pushConcurrency!,
  ...(flags.sliceBytes ? ["--sliceBytes", flags.sliceBytes] : []),
  ...(flags.release ? ["--release"] : []),
], {
  v8Flags: ["--expose-gc"],
  permissions: [`--allow-ffi=${SYSTEM_LIBRARY_DIRS.join(",")}`],
});
const { port, pid } = await server.next<{ port: number; pid: number }>();

async function sample(): Promise<Sample> {
  const usage = await server.request<{ held: number; heapUsed: number; heapTotal: number; external: number }>(
    { cmd: "usage" },
  );
  return { ...usage, smaps: mappings(pid) };
}

/**
 * The framed request each stream opens with, as a DiscoveryRequest of an ADS stream's first message: 200 bytes,
 * or `--requestBytes` (a request naming thousands of resources is hundreds of KB).
 */
const REQUEST = (() => {
  const length = Number(flags.requestBytes);
  const bytes = Buffer.alloc(5 + length, 0x62);
  bytes.writeUInt8(0, 0);
  bytes.writeUInt32BE(length, 1);
  return bytes;
})();

const closers: (() => void)[] = [];

function connectH2(): Promise<void> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`, { settings: clientSettings });
    session.once("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources",
      "content-type": "application/grpc",
      te: "trailers",
    });
    stream.on("data", () => {});
    stream.on("error", () => {});
    stream.write(REQUEST, () => resolve());
    closers.push(() => session.destroy());
  });
}

function connectTcp(): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(REQUEST, () => resolve()));
    socket.once("error", reject);
    socket.on("data", () => {});
    closers.push(() => socket.destroy());
  });
}

async function connectAll(): Promise<void> {
  const connect = layer === "tcp" ? connectTcp : connectH2;
  let next = 0;
  const worker = async () => {
    while (next < connections) {
      next++;
      await connect();
    }
  };
  await Promise.all(Array.from({ length: Number(flags.concurrency) }, worker));
}

async function untilHeld(count: number): Promise<Sample> {
  for (;;) {
    const current = await sample();
    if (current.held === count) return current;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
await sleep(500);
const samples: Record<string, Sample> = {};
samples.before = await sample();
for (let cycle = 1; cycle <= Number(flags.cycles); cycle++) {
  const suffix = cycle === 1 ? "" : ` ${cycle}`;
  await connectAll();
  samples[`connected${suffix}`] = await untilHeld(connections);
  for (let push = 0; push < Number(flags.pushes); push++) await server.request({ cmd: "push" });
  await sleep(500);
  samples[`pushed${suffix}`] = await sample();
  await server.request({ cmd: "trim" });
  samples[`trimmed${suffix}`] = await sample();
  await server.request({ cmd: "drop" });
  for (const close of closers.splice(0)) close();
  await sleep(1000);
  await server.request({ cmd: "trim" });
  samples[`closedTrimmed${suffix}`] = await sample();
}
await server.close();

const perConnection = (value: number) => Math.round(value / connections * 10) / 10;
const rows = Object.entries(samples).map(([name, s]) => {
  const base = samples.before;
  return {
    state: name,
    held: s.held,
    rssMiB: Math.round(s.smaps.total / 1024),
    "rss KiB/conn": perConnection(s.smaps.total - base.smaps.total),
    "[heap] KiB/conn": perConnection(s.smaps.heap - base.smaps.heap),
    "[heap] size KiB/conn": perConnection(s.smaps.heapSize - base.smaps.heapSize),
    "other anon KiB/conn": perConnection(s.smaps.anon - base.smaps.anon),
    "V8 used KiB/conn": perConnection((s.heapUsed - base.heapUsed) / 1024),
    "V8 total KiB/conn": perConnection((s.heapTotal - base.heapTotal) / 1024),
    "external KiB/conn": perConnection((s.external - base.external) / 1024),
  };
});
console.table(rows);
console.log(JSON.stringify({
  layer,
  connections,
  requestBytes: Number(flags.requestBytes),
  options: flags.options,
  clientSettings,
  rows,
}));
