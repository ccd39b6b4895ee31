/**
 * Splits a V8 `.cpuprofile` of the discovery server into the categories issue #32 asks for: each sample's time
 * goes to the category of the nearest frame on its stack (leaf first) that a rule names, by file and function.
 *
 *   deno run --allow-read bench/cpuprofile_categories.ts FILE.cpuprofile [FILE…]
 *
 * @module
 */
import type { CpuProfile } from "./cpuprofile_top.ts";

/** A rule: frames whose URL contains `file` (and whose function matches `fn`, when given) are `category`. */
interface Rule {
  readonly file: string;
  readonly fn?: RegExp;
  readonly category: string;
}

const ACK = "request decoding and ACK bookkeeping";
const QUEUE = "push queue and gate scheduling";
const GENERATE = "generation and cache lookups";
const FRAMING = "framing";
const WRITE = "grpc-js / node:http2 write path";
const SEND_DONE = "send-completion tracking";
const METRICS = "metrics and logging";
const SNAPSHOT = "config reading and snapshot build";

const PROFILER = "(the profiler itself)";
const OWN_READ = "own HTTP/2 read path (frames, flow control, deframing)";
const OWN_WRITE = "own HTTP/2 write path (DATA frames, per-turn writes)";
const SOCKET = "Deno socket read/write ops";

/** First match wins, so the more specific rules of a file come before the file's catch-all. */
const RULES: readonly Rule[] = [
  { file: "inspector", category: PROFILER },
  // The benchmark's own HTTP/2 server (bench/h2_*.ts) and the replay's request handling.
  { file: "bench/h2_turn_writer.ts", category: OWN_WRITE },
  { file: "bench/h2_stream.ts", category: OWN_WRITE },
  { file: "bench/h2_connection.ts", fn: /pump|sendHeaders/, category: OWN_WRITE },
  { file: "bench/h2_connection.ts", category: OWN_READ },
  { file: "bench/h2_frames.ts", category: OWN_READ },
  { file: "bench/grpc_deframer.ts", category: OWN_READ },
  { file: "bench/replay_answers.ts", category: ACK },
  { file: "ext:deno_net/", category: SOCKET },
  // Reading requests (ACKs) off the connection, up to their decoding.
  { file: "@grpc/grpc-js/build/src/stream-decoder.js", category: ACK },
  {
    file: "@grpc/grpc-js/build/src/server-interceptors.js",
    fn: /handleDataFrame|onReceiveMessage/,
    category: ACK,
  },
  { file: "ext:deno_node/http2.ts", fn: /^receive$|onStreamRead|_read$/, category: ACK },
  { file: "ext:deno_node/internal/streams/readable.js", category: ACK },
  {
    file: "discovery/xds/xds_connection.ts",
    fn: /^(send|settle|sendCounted)$|^(?:<anonymous>)$/,
    category: SEND_DONE,
  },
  { file: "shared/grpc/send_port.ts", category: SEND_DONE },
  { file: "shared/grpc/send_deadlines.ts", category: SEND_DONE },
  { file: "discovery/xds/xds_connection.ts", fn: /record(Ack|Nack)|isLatestNonce|sync$/, category: ACK },
  { file: "discovery/xds/ack_tracker.ts", category: ACK },
  { file: "shared/xds/reply_kind.ts", category: ACK },
  {
    file: "discovery/xds/xds_connection.ts",
    fn: /recordSent|holdsSent|recordUnchanged|recordUnaffected/,
    category: GENERATE,
  },
  {
    file: "discovery/xds/xds_connection.ts",
    fn: /generateForConnection|pushTypes|touched/,
    category: GENERATE,
  },
  { file: "discovery/xds/xds_connection.ts", category: QUEUE },
  { file: "discovery/xds/sotw_connection.ts", fn: /handleRequest|sameNames|subscribe/, category: ACK },
  { file: "discovery/xds/sotw_connection.ts", fn: /sendPrepared/, category: SEND_DONE },
  { file: "discovery/xds/sotw_connection.ts", category: GENERATE },
  { file: "discovery/xds/delta_connection.ts", fn: /handleRequest/, category: ACK },
  { file: "discovery/xds/delta_connection.ts", category: GENERATE },
  { file: "discovery/xds/ads_stream.ts", category: ACK },
  { file: "discovery/xds/name_list_table.ts", category: ACK },
  { file: "discovery/xds/name_interner.ts", category: ACK },
  { file: "discovery/xds/name_budget.ts", category: ACK },
  { file: "proto/discovery_request.ts", category: ACK },
  { file: "discovery/xds/push_queue.ts", category: QUEUE },
  { file: "discovery/xds/response_gate.ts", category: QUEUE },
  { file: "shared/grpc/outbound_turns.ts", category: QUEUE },
  { file: "discovery/xds/ads_server.ts", category: QUEUE },
  { file: "discovery/xds/xds_metrics.ts", category: METRICS },
  { file: "shared/metrics/", category: METRICS },
  { file: "prom-client", category: METRICS },
  { file: "shared/log/", category: METRICS },
  { file: "discovery/xds/nack_log.ts", category: METRICS },
  { file: "discovery/xds/resource_runs.ts", category: FRAMING },
  { file: "proto/discovery_frame.ts", category: FRAMING },
  { file: "proto/grpc_prefix.ts", category: FRAMING },
  { file: "discovery/xds/nonce.ts", category: FRAMING },
  { file: "shared/grpc/outbound_state.ts", category: SEND_DONE },
  { file: "shared/grpc/prefixed_send.ts", category: WRITE },
  { file: "@grpc/grpc-js", category: WRITE },
  { file: "node:http2", category: WRITE },
  { file: "ext:deno_node/internal/streams/writable.js", category: WRITE },
  { file: "ext:deno_node/internal/stream_base_commons.ts", category: WRITE },
  { file: "ext:deno_node/net.ts", category: WRITE },
  { file: "ext:deno_node/http2.ts", category: WRITE },
  { file: "discovery/xds/", category: GENERATE },
  { file: "discovery/generate/", category: GENERATE },
  { file: "discovery/push/push_context.ts", category: SNAPSHOT },
  { file: "discovery/push/", category: GENERATE },
  { file: "discovery/config/", category: SNAPSHOT },
  { file: "discovery/registry/", category: SNAPSHOT },
  { file: "shared/config/", category: SNAPSHOT },
  { file: "yaml", category: SNAPSHOT },
];

/** Milliseconds per category; frames no rule names land in `other`, and V8's own in `(idle)`, `(program)`, `(gc)`. */
export function profileCategories(profile: CpuProfile): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const categoryOf = new Map<number, string>();
  const categorize = (id: number): string => {
    const known = categoryOf.get(id);
    if (known !== undefined) return known;
    const { url, functionName } = byId.get(id)!.callFrame;
    let category: string | undefined;
    if (/^\((idle|program|garbage collector)\)$/.test(functionName)) category = functionName;
    else {
      const rule = RULES.find((r) => url.includes(r.file) && (r.fn === undefined || r.fn.test(functionName)));
      category = rule?.category;
    }
    if (category === undefined) {
      const up = parent.get(id);
      category = up === undefined ? "other" : categorize(up);
    }
    categoryOf.set(id, category);
    return category;
  };
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const category = categorize(id);
    out.set(category, (out.get(category) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return out;
}

if (import.meta.main) {
  for (const file of Deno.args) {
    const split = profileCategories(JSON.parse(await Deno.readTextFile(file)));
    const busy = [...split].filter(([c]) => c !== "(idle)" && c !== PROFILER)
      .reduce((sum, [, ms]) => sum + ms, 0);
    console.log(
      `\n${file}: ${busy.toFixed(0)} ms busy (${(split.get(PROFILER) ?? 0).toFixed(0)} ms more profiling)`,
    );
    for (const [category, ms] of [...split].sort((a, b) => b[1] - a[1])) {
      if (category === "(idle)" || category === PROFILER) continue;
      console.log(
        `${ms.toFixed(0).padStart(8)} ms ${(100 * ms / busy).toFixed(1).padStart(5)}%  ${category}`,
      );
    }
  }
}
