/**
 * The load process of the xDS benchmark: N simulated proxies in one Deno process (so their CPU does not
 * share the server's event loop), driven by the controller over JSON lines on stdin/stdout.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-env bench/load_agent.ts \
 *     --addr 127.0.0.1:15010 --proxies 1000 [--delta] [--services 1000] [--listeners K] \
 *     [--profile-connect FILE --profile-seconds 8]   (needs --allow-sys and --allow-write=FILE)
 *
 * @module
 */
import { parseArgs } from "node:util";
import { messageTypeForUrl } from "../proto/any_codec.ts";
import { loadEnvoySchema } from "../proto/envoy_schema.ts";
import { jsonToStruct } from "../proto/struct_json.ts";
import { InspectorProfiler } from "../discovery/http/inspector_profiler.ts";
import type { AgentCommand, AwaitReply, ConnectReply } from "./agent_protocol.ts";
import { jsonLines } from "./agent_protocol.ts";
import { clusterNames, epochMs, listenerName, meshService } from "./mesh_fixture.ts";
import { type ProxyContext, SHORT_TYPE, SimProxy, type Subscription } from "./sim_proxy.ts";
import { readAnyResources } from "./wire_reader.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    addr: { type: "string" },
    proxies: { type: "string", default: "100" },
    services: { type: "string", default: "1000" },
    delta: { type: "boolean", default: false },
    listeners: { type: "string", default: "all" },
    envoy: { type: "boolean", default: false },
    "client-window": { type: "string" },
    "profile-connect": { type: "string" },
    "profile-seconds": { type: "string", default: "8" },
  },
});

if (flags.addr === undefined) throw new TypeError("Missing --addr: expected host:port of the ADS server");
const proxyCount = Number(flags.proxies);
const serviceCount = Number(flags.services);

/** Explicit targets: K services per proxy, always including service 0 (the one the benchmark edits). */
function subscriptionFor(i: number): Subscription {
  // Envoy sidecars watch every cluster and listener; what they see is narrowed by Sidecar resources instead.
  if (flags.listeners === "all" || flags.envoy) return {};
  const k = Number(flags.listeners);
  const picked = new Set([0]);
  for (let m = 0; picked.size < Math.min(k, serviceCount); m++) picked.add((i * 7 + m * 13) % serviceCount);
  const services = [...picked].map(meshService);
  return { listeners: services.map(listenerName), clusters: services.flatMap(clusterNames) };
}

const nameMemo = new Map<string, readonly string[]>();
const proxies: SimProxy[] = Array.from({ length: proxyCount }, (_, i) => {
  const namespace = meshService(i % serviceCount).namespace;
  const ip = `10.200.${Math.floor(i / 250)}.${(i % 250) + 1}`;
  const node = {
    id: `sidecar~${ip}~load-${i}.${namespace}~${namespace}.svc.cluster.local`,
    metadata: jsonToStruct({
      ...(flags.envoy ? {} : { GENERATOR: "grpc" }),
      NAMESPACE: namespace,
      LABELS: { app: "load" },
    }),
  };
  const ctx: ProxyContext = {
    delta: flags.delta,
    subscription: subscriptionFor(i),
    nameMemo,
    envoy: flags.envoy,
    ...(flags["client-window"] === undefined ? {} : { window: Number(flags["client-window"]) }),
  };
  return new SimProxy(i, flags.addr!, node, ctx, i === 0);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function endedCounts(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of proxies) {
    if (p.ended === undefined) continue;
    const details = p.ended.details.replace(/\s*\(\d{4}-\d\d-\d\dT[^)]*\)/g, "").slice(0, 80);
    const key = `${p.ended.code} ${details}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/**
 * With `--profile-connect FILE`, a CPU profile of this process from the first connect on, saved to FILE: at a
 * full view the load process, not the server, can be what a connect waits on.
 */
let connectProfileFile = flags["profile-connect"];
function profileConnect(): Promise<void> {
  const file = connectProfileFile;
  if (file === undefined) return Promise.resolve();
  connectProfileFile = undefined; // the first connect only
  return new InspectorProfiler().cpuProfile(Number(flags["profile-seconds"]))
    .then((profile) => Deno.writeTextFile(file, JSON.stringify(profile)));
}

async function storm(reopen: boolean, timeoutMs: number): Promise<ConnectReply> {
  const profiled = profileConnect();
  if (reopen) { for (const p of proxies) p.close(); }
  for (const p of proxies) p.startRecording();
  const started = epochMs();
  for (const p of proxies) p.open();
  const deadline = started + timeoutMs;
  while (epochMs() < deadline && proxies.some((p) => p.fullAt === 0 && p.ended === undefined)) {
    await sleep(20);
  }
  const done = proxies.filter((p) => p.fullAt > 0);
  await profiled;
  return {
    started,
    latencies: done.map((p) => p.fullAt - started),
    incomplete: proxies.length - done.length,
    retries: proxies.reduce((sum, p) => sum + p.retries, 0),
    retryReasons: proxies.flatMap((p) => p.retryReasons).reduce<Record<string, number>>((counts, reason) => {
      counts[reason] = (counts[reason] ?? 0) + 1;
      return counts;
    }, {}),
    ended: endedCounts(),
    bytes: proxies.reduce((sum, p) => sum + p.arrivals.reduce((s, a) => s + a.bytes, 0), 0),
  };
}

/** Per proxy, the first arrival of each type at or after `since`; undefined while one is missing. */
function convergedAt(p: SimProxy, since: number, types: readonly string[]): number | undefined {
  let last = 0;
  for (const type of types) {
    const first = p.arrivals.find((a) => a.typeUrl === type && a.at >= since);
    if (first === undefined) return undefined;
    last = Math.max(last, first.at);
  }
  return last;
}

async function awaitChange(command: Extract<AgentCommand, { cmd: "await" }>): Promise<AwaitReply> {
  const { since, types } = command;
  const deadline = epochMs() + command.timeoutMs;
  const done = new Map<number, number>();
  // A proxy whose stream ended will not converge: it counts as missing instead of holding the wait.
  const waiting = () => proxies.some((p) => !done.has(p.index) && p.ended === undefined);
  while (waiting() && epochMs() < deadline) {
    for (const p of proxies) {
      if (done.has(p.index)) continue;
      const at = convergedAt(p, since, types);
      if (at !== undefined) done.set(p.index, at);
    }
    if (waiting()) await sleep(10);
  }
  await sleep(command.settleMs);
  const arrivals: Record<string, number> = {};
  let bytes = 0;
  let first = Infinity;
  for (const p of proxies) {
    for (const a of p.arrivals) {
      if (a.at < since) continue;
      arrivals[SHORT_TYPE[a.typeUrl] ?? a.typeUrl] = (arrivals[SHORT_TYPE[a.typeUrl] ?? a.typeUrl] ?? 0) + 1;
      bytes += a.bytes;
      first = Math.min(first, a.at);
    }
  }
  return {
    latencies: [...done.values()].map((at) => at - since),
    missing: proxies.length - done.size,
    arrivals,
    bytes,
    firstMs: first === Infinity ? -1 : first - since,
    ended: endedCounts(),
  };
}

async function capture(dir: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [typeUrl, bytes] of proxies[0].latest) {
    const short = SHORT_TYPE[typeUrl];
    await Deno.writeFile(`${dir}/${short}.bin`, bytes);
    out[short] = bytes.length;
  }
  return out;
}

function inspect(typeUrl: string, name: string): Record<string, unknown> | null {
  const bytes = proxies[0].latest.get(typeUrl);
  if (bytes === undefined) return null;
  const schema = loadEnvoySchema();
  const type = messageTypeForUrl(typeUrl, schema);
  const any = schema.lookupType("google.protobuf.Any");
  for (const raw of readAnyResources(bytes)) {
    const value = (any.decode(raw) as unknown as { value: Uint8Array }).value;
    const object = type.toObject(type.decode(value), { longs: String, enums: String });
    if (object.name === name || object.cluster_name === name) return object;
  }
  return null;
}

async function handle(command: AgentCommand): Promise<unknown> {
  switch (command.cmd) {
    case "connect":
      return await storm(false, command.timeoutMs);
    case "reconnect":
      return await storm(true, command.timeoutMs);
    case "record":
      for (const p of proxies) p.startRecording();
      return { recording: true, connected: proxies.filter((p) => p.connected).length };
    case "await":
      return await awaitChange(command);
    case "capture":
      return { captured: await capture(command.dir) };
    case "inspect":
      return { resource: inspect(command.typeUrl, command.name) };
    case "close":
      return { closing: true };
  }
}

const encoder = new TextEncoder();
const reply = (value: unknown) => Deno.stdout.writeSync(encoder.encode(JSON.stringify(value) + "\n"));

if (import.meta.main) {
  reply({ ready: true, proxies: proxies.length });
  for await (const line of jsonLines(Deno.stdin.readable)) {
    const command = line as AgentCommand;
    try {
      reply(await handle(command));
    } catch (error) {
      reply({ error: `${command.cmd}: ${(error as Error).message}` });
    }
    if (command.cmd === "close") break;
  }
  for (const p of proxies) p.close();
  Deno.exit(0);
}
