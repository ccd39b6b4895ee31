/**
 * The agent's DNS proxy answering from its name table (BENCHMARKS.md; targets ≥ 20,000 answers/s, p99 ≤ 2 ms):
 * the in-process cost of one answer (decode, lookup, encode), then answers per second and latency over real
 * UDP on loopback from another process (as the workload's queries come), one query at a time and with many in
 * flight from a few sockets. The table holds 2000 ServiceEntry hosts and 2000 orchestrator services; queries
 * cycle over them and their search-domain forms.
 *
 * `deno run --allow-net=127.0.0.1 --allow-read --allow-env --allow-run=deno bench/dns_bench.ts [--queries N]
 * [--sockets 4] [--inflight 32]`
 *
 * @module
 */
import dgram from "node:dgram";
import process from "node:process";
import type { NameTable } from "../proto/name_table.ts";
import { silentLogger } from "../shared/log/logger.ts";
import { Metrics } from "../shared/metrics/metrics.ts";
import { DNS_CLASS_IN, DNS_FLAG, DNS_TYPE, encodeDnsMessage } from "../agent/dns/dns_message.ts";
import { DnsProxy } from "../agent/dns/dns_proxy.ts";
import { summarize } from "./latency_stats.ts";

const flag = (name: string, fallback: number) => {
  const at = Deno.args.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(Deno.args[at + 1]);
};
const QUERIES = flag("queries", 200_000);
const SOCKETS = flag("sockets", 4);
const IN_FLIGHT = flag("inflight", 32);

const table: Record<string, NameTable[string]> = {};
const names: string[] = [];
for (let i = 0; i < 2000; i++) {
  table[`ext-${i}.example.com`] = {
    ips: [`10.20.${i >> 8}.${i & 255}`],
    registry: "External",
    shortname: "",
    namespace: "",
  };
  table[`svc-${i}.shop.svc.cluster.local`] = {
    ips: [`10.96.${i >> 8}.${i & 255}`],
    registry: "Orchestrator",
    shortname: `svc-${i}`,
    namespace: "shop",
  };
  names.push(`ext-${i}.example.com.`, `svc-${i}.`, `svc-${i}.shop.svc.cluster.local.shop.svc.cluster.local.`);
}
const queryFor = (i: number) =>
  encodeDnsMessage({
    id: i & 0xffff,
    flags: DNS_FLAG.rd,
    questions: [{ name: names[i % names.length], type: DNS_TYPE.A, class: DNS_CLASS_IN }],
    answers: [],
    authorities: [],
    additionals: [],
  });
const queries = Array.from({ length: names.length }, (_, i) => queryFor(i));

/** Sends `total` queries to `port` from one socket keeping `window` in flight; the latency of each, in ms. */
async function drive(port: number, total: number, window: number): Promise<number[]> {
  // A 4 KiB read buffer (Deno allocates it per datagram; 64 KiB by default): the client costs less of the
  // two cores the proxy shares with it.
  const socket = dgram.createSocket({ type: "udp4", recvBufferSize: 2048 });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const sentAt = new Map<number, number>();
  const latencies: number[] = [];
  let sent = 0;
  const done = Promise.withResolvers<void>();
  const send = () => {
    const id = sent & 0xffff;
    const bytes = queries[sent % queries.length].slice();
    bytes[0] = id >> 8;
    bytes[1] = id & 0xff;
    sentAt.set(id, performance.now());
    sent++;
    socket.send(bytes, port, "127.0.0.1");
  };
  socket.on("message", (reply) => {
    const id = (reply[0] << 8) | reply[1];
    latencies.push(performance.now() - sentAt.get(id)!);
    sentAt.delete(id);
    if (latencies.length === total) done.resolve();
    else if (sent < total) send();
  });
  for (let i = 0; i < Math.min(window, total); i++) send();
  await done.promise;
  socket.close();
  return latencies;
}

/** Both UDP scenarios against the proxy on `port`, printed. */
async function runClient(port: number): Promise<void> {
  const scenarios = [
    ["one at a time", 1, 1, Math.min(QUERIES, 20_000)],
    [`${SOCKETS} sockets × 2 in flight`, SOCKETS, 2, QUERIES / 2],
    [`${SOCKETS} sockets × ${IN_FLIGHT} in flight`, SOCKETS, IN_FLIGHT, QUERIES],
  ] as const;
  for (const [label, sockets, window, total] of scenarios) {
    const started = performance.now();
    const runs = Array.from({ length: sockets }, () => drive(port, Math.floor(total / sockets), window));
    const all = (await Promise.all(runs)).flat();
    const seconds = (performance.now() - started) / 1000;
    const s = summarize(all);
    console.log(
      `UDP, ${label}: ${Math.round(all.length / seconds)} answers/s; latency ms p50 ${s.p50} p90 ${s.p90} ` +
        `p99 ${s.p99} max ${s.max}`,
    );
  }
}

const cpuMicros = (usage: { user: number; system: number }) => usage.user + usage.system;

/** Queries the proxy has taken so far (its `dns_requests_total`). */
async function answered(): Promise<number> {
  const text = await metrics.render();
  return Number(/^\S*dns_requests_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? 0);
}

const metrics = new Metrics("agent", { version: "bench", tag: "bench" });

/** The proxy with the table; its in-process cost, then the client process against it. */
async function runServer(): Promise<void> {
  const proxy = new DnsProxy({
    scope: { namespace: "shop", domain: "shop.svc.cluster.local", search: ["shop.svc.cluster.local"] },
    upstreams: [],
    port: 0,
    hosts: ["127.0.0.1"],
    log: silentLogger,
    metrics,
  });
  proxy.updateTable(table);
  await proxy.start();
  const started = performance.now();
  const inProcessCpu = process.cpuUsage();
  for (let i = 0; i < QUERIES; i++) await proxy.answer(queries[i % queries.length], "udp");
  const ms = performance.now() - started;
  console.log(
    `in process: ${Math.round(QUERIES / (ms / 1000))} answers/s, ${
      (ms * 1000 / QUERIES).toFixed(1)
    } µs each, ` +
      `CPU ${(cpuMicros(process.cpuUsage(inProcessCpu)) / QUERIES).toFixed(1)} µs each`,
  );
  // The workload's queries come from another process: each side has its own event loop.
  const client = new Deno.Command("deno", {
    args: [
      "run",
      "--allow-net=127.0.0.1",
      "--allow-read",
      "--allow-env",
      import.meta.filename!,
      ...Deno.args,
    ],
    env: { DNS_BENCH_PORT: String(proxy.port) },
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const cpuBefore = process.cpuUsage();
  const answersBefore = await answered();
  await client.status;
  const cpu = process.cpuUsage(cpuBefore);
  const answers = await answered() - answersBefore;
  console.log(
    `proxy CPU over the UDP runs: ${(cpuMicros(cpu) / answers).toFixed(1)} µs per answer ` +
      `(${answers} answers, user ${Math.round(cpu.user / 1000)} ms, system ${
        Math.round(cpu.system / 1000)
      } ms)`,
  );
  await proxy.close();
}

const clientPort = Number(Deno.env.get("DNS_BENCH_PORT") ?? 0);
if (clientPort !== 0) await runClient(clientPort);
else await runServer();
