/**
 * Config growth at runtime (#36, finding 8): how long the real `mesh-discovery discovery --registries Mock
 * --configDir DIR` stops answering while config is added to its directory. Each scenario starts a fresh
 * server on an almost empty directory, writes its files, and polls `/ready` every 10 ms from before the write
 * until the server has taken the change in (the config event counter reached what was written, or a
 * rejection was counted) and two quiet seconds more, which include the push the change triggers. The figure
 * is the longest gap between two answers: the longest the event loop was held. The server has no loop-lag
 * metric of its own.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-write --allow-env --allow-run=deno,cat \
 *     --allow-sys=loadavg \
 *     bench/config_growth.ts [--only NAME] [--profile DIR [--profile-seconds 10]] [--server-v8-flags=--flag,--flag]
 *
 * Prints one JSON line per scenario, then a table. Besides the longest gap, each line has the 50th, 90th and
 * 99th percentiles of the gaps, the server's CPU time from the write to the end (every thread, from `/proc`)
 * and the one-minute load average at the write and at the end: on a shared machine the gaps follow the load;
 * `heapCollections` counts the full collections the server ran after a burst (none is expected here).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { discoveryAddresses, discoveryArgs, startProgram } from "../tests/helpers/programs.ts";
import { longestBusyMs, longestSampleGapMs } from "./cpuprofile_top.ts";
import { HEAP_COLLECTIONS, metricSum } from "./server_metric.ts";

const POLL_MS = 10;
const SETTLE_MS = 2_000;
const TIMEOUT_MS = 180_000;
/** The start of a profile, left out of its longest busy stretch: the profiler's own start holds the loop. */
const PROFILER_START_MS = 500;

/** What one scenario writes and how the bench knows the server has taken it in. */
interface Scenario {
  readonly name: string;
  /** Files present before the server starts. */
  readonly initial?: Record<string, string>;
  /** Files written once the server is ready, while `/ready` is being polled. */
  readonly files: () => Record<string, string>;
  /** Config events (`discovery_inbound_updates{type="config"}`) the write must add. */
  readonly configEvents?: number;
  /** True when the write is refused: done once a rejection is counted instead. */
  readonly refused?: boolean;
}

const { values } = parseArgs({
  args: Deno.args,
  options: {
    only: { type: "string" },
    profile: { type: "string" },
    "profile-seconds": { type: "string", default: "10" },
    "server-v8-flags": { type: "string" },
  },
});

const yaml = (docs: readonly Record<string, unknown>[]) => docs.map((d) => JSON.stringify(d)).join("\n---\n");

function address(i: number): string {
  return `10.${Math.floor(i / 65536) % 256}.${Math.floor(i / 256) % 256}.${i % 256}`;
}

function workloadEntry(i: number): Record<string, unknown> {
  return {
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "WorkloadEntry",
    metadata: { name: `we-${i}`, namespace: "bench" },
    spec: { address: address(i), labels: { app: `app-${i % 50}` }, serviceAccount: "bench" },
  };
}

function serviceEntry(i: number, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "ServiceEntry",
    metadata: { name: `se-${i}`, namespace: "bench" },
    spec: {
      hosts: [`svc-${i}.bench.example.com`],
      ports: [{ number: 8080, name: "http", protocol: "HTTP" }],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ...spec,
    },
  };
}

/** Fifty ServiceEntries, each selecting the WorkloadEntries of one `app` label. */
const SELECTORS = {
  "selectors.yaml": yaml(
    Array.from(
      { length: 50 },
      (_, i) => serviceEntry(100_000 + i, { workloadSelector: { labels: { app: `app-${i}` } } }),
    ),
  ),
};

/** The server's default `maxFileBytes`: a file over it is refused unread. */
const MAX_FILE_BYTES = 1024 * 1024;

/** Compact YAML of `count(i)` documents, as many as fit in one config file (at most `limit`). */
function filling(limit: number, document: (i: number) => string): { text: string; count: number } {
  let text = "";
  let count = 0;
  while (count < limit) {
    const next = (count === 0 ? "" : "---\n") + document(count);
    if (text.length + next.length > MAX_FILE_BYTES) break;
    text += next;
    count++;
  }
  return { text, count };
}

const compactWorkload = (i: number) =>
  `apiVersion: networking.mesh.io/v1beta1\nkind: WorkloadEntry\nmetadata: {name: we-${i}, namespace: bench}\n` +
  `spec: {address: ${address(i)}, labels: {app: app-${i % 50}}}\n`;
const compactEntry = (i: number) =>
  `apiVersion: networking.mesh.io/v1beta1\nkind: ServiceEntry\nmetadata: {name: se-${i}, namespace: bench}\n` +
  `spec: {hosts: [svc-${i}.bench.example.com], ports: [{number: 8080, name: http, protocol: HTTP}], ` +
  `location: MESH_INTERNAL, resolution: STATIC}\n`;
const ENTRIES_FILE = filling(4_000, compactEntry);
const WORKLOADS_FILE = filling(Infinity, compactWorkload);

function workloadFiles(n: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`we-${i}.yaml`, yaml([workloadEntry(i)])]));
}

function nestedYaml(bytes: number): string {
  const depth = Math.floor((bytes - 200) / 7);
  const head = "apiVersion: networking.mesh.io/v1beta1\nkind: VirtualService\n" +
    "metadata: {name: nested, namespace: bench}\nspec: {hosts: [a], http: ";
  return head + "[{a: ".repeat(depth) + "1" + "}]".repeat(depth) + "}\n";
}

const SCENARIOS: readonly Scenario[] = [
  // The control: what the machine's load alone makes of the longest gap.
  { name: "nothing written (control)", initial: SELECTORS, files: () => ({}), configEvents: 0 },
  ...[1_000, 2_000, 4_000].map((n) => ({
    name: `${n} WorkloadEntries, a file each`,
    initial: SELECTORS,
    files: () => workloadFiles(n),
    configEvents: n,
  })),
  {
    name: `${ENTRIES_FILE.count} ServiceEntries in one file`,
    files: () => ({ "ses.yaml": ENTRIES_FILE.text }),
    configEvents: ENTRIES_FILE.count,
  },
  {
    name: `${WORKLOADS_FILE.count} WorkloadEntries filling one 1 MiB file`,
    initial: SELECTORS,
    files: () => ({ "wes.yaml": WORKLOADS_FILE.text }),
    configEvents: WORKLOADS_FILE.count,
  },
  {
    name: "a ServiceEntry with 39k endpoints",
    files: () => ({
      "big_se.yaml": yaml([serviceEntry(0, {
        endpoints: Array.from({ length: 39_000 }, (_, i) => ({ address: address(i) })),
      })]),
    }),
    configEvents: 1,
  },
  {
    name: "a VirtualService with 10k routes",
    initial: { "se.yaml": yaml([serviceEntry(0)]) },
    files: () => ({
      "big_vs.yaml": yaml([{
        apiVersion: "networking.mesh.io/v1beta1",
        kind: "VirtualService",
        metadata: { name: "big", namespace: "bench" },
        spec: {
          hosts: ["svc-0.bench.example.com"],
          http: Array.from({ length: 10_000 }, (_, i) => ({
            match: [{ uri: { prefix: `/p${i}` } }],
            route: [{ destination: { host: "svc-0.bench.example.com" } }],
          })),
        },
      }]),
    }),
    configEvents: 1,
  },
  {
    name: "800 KB of nested YAML (refused)",
    files: () => ({ "nested.yaml": nestedYaml(800_000) }),
    refused: true,
  },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const CONFIG_EVENTS = /^discovery_inbound_updates\{type="config"\} (\d+)/gm;
const REJECTIONS = /^discovery_total_rejected_configs(?:\{[^}]*\})? (\d+)/gm;

/** Polls `/ready` every `POLL_MS` until stopped; returns the longest gap between answers. */
function pollReady(
  httpAddr: string,
): {
  stop: () => Promise<
    { maxGapMs: number; answers: number; gapsOver50: number; topGapsAt: string[]; gapP50P90P99: number[] }
  >;
} {
  let running = true;
  let maxGap = 0;
  let answers = 0;
  const gaps: { ms: number; at: number }[] = [];
  const all: number[] = [];
  const origin = performance.now();
  const loop = (async () => {
    let last = performance.now();
    while (running) {
      const started = performance.now();
      const response = await fetch(`http://${httpAddr}/ready`).catch(() => undefined);
      await response?.body?.cancel();
      const now = performance.now();
      if (response) {
        maxGap = Math.max(maxGap, now - last);
        all.push(now - last);
        if (now - last > 50) gaps.push({ ms: now - last, at: last - origin });
        last = now;
        answers++;
      }
      await sleep(Math.max(0, POLL_MS - (now - started)));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const top = gaps.toSorted((a, b) => b.ms - a.ms).slice(0, 3);
      const sorted = all.toSorted((a, b) => a - b);
      const at = (q: number) =>
        Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
      return {
        gapP50P90P99: [at(0.5), at(0.9), at(0.99)],
        maxGapMs: Math.round(maxGap),
        answers,
        gapsOver50: gaps.length,
        topGapsAt: top.map((g) => `${Math.round(g.ms)} ms at +${Math.round(g.at)} ms`),
      };
    },
  };
}

/**
 * With `--profile DIR`, saves a CPU profile of the server from the write on as `DIR/<scenario>.cpuprofile`
 * and returns, in ms after the profiler's own start (the write comes a second later), its longest busy
 * stretch and its longest interval between two samples (time the server got no CPU).
 */
async function profileServer(
  monitoringAddr: string,
  name: string,
): Promise<{ busy: number; sampleGap: number } | undefined> {
  if (values.profile === undefined) return undefined;
  const seconds = values["profile-seconds"];
  const response = await fetch(`http://${monitoringAddr}/debug/pprof/profile?seconds=${seconds}`);
  const text = await response.text();
  await Deno.mkdir(values.profile, { recursive: true });
  await Deno.writeTextFile(join(values.profile, `${name.replaceAll(/\W+/g, "_")}.cpuprofile`), text);
  const profile = JSON.parse(text);
  return {
    busy: Math.round(longestBusyMs(profile, PROFILER_START_MS)),
    sampleGap: Math.round(longestSampleGapMs(profile, PROFILER_START_MS)),
  };
}

/** CPU seconds (user + system, every thread) the process `pid` has used, from `/proc` (read by `cat`). */
async function cpuSeconds(pid: number): Promise<number> {
  const output = await new Deno.Command("cat", { args: [`/proc/${pid}/stat`] }).output();
  const stat = new TextDecoder().decode(output.stdout);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the line, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The one-minute load average. */
function loadAverage(): number {
  return Deno.loadavg()[0];
}

async function run(scenario: Scenario): Promise<Record<string, unknown>> {
  const dir = await Deno.makeTempDir({ prefix: "mesh_config_growth_" });
  for (const [name, text] of Object.entries(scenario.initial ?? {})) {
    await Deno.writeTextFile(join(dir, name), text);
  }
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      "--registries",
      "Mock",
      "--configDir",
      dir,
      "--log_as_json",
      ...(values.profile === undefined ? [] : ["--profile"]),
    ]),
    values["server-v8-flags"] === undefined ? {} : { DENO_V8_FLAGS: values["server-v8-flags"] },
  );
  try {
    await server.waitFor(/"msg":"discovery server started"/, 120_000);
    for (;;) {
      const response = await fetch(`http://${addresses.httpAddr}/ready`).catch(() => undefined);
      await response?.body?.cancel();
      if (response?.status === 200) break;
      await sleep(50);
    }
    await sleep(1_000);
    const eventsBefore = await metricSum(addresses.monitoringAddr, CONFIG_EVENTS);
    const rejectedBefore = await metricSum(addresses.monitoringAddr, REJECTIONS);
    const files = scenario.files();
    const bytes = Object.values(files).reduce((n, t) => n + t.length, 0);
    const profile = profileServer(addresses.monitoringAddr, scenario.name);
    if (values.profile !== undefined) await sleep(2 * PROFILER_START_MS);
    const loadBefore = loadAverage();
    const cpuBefore = await cpuSeconds(server.child.pid);
    const poll = pollReady(addresses.httpAddr);
    const started = performance.now();
    for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, name), text);
    let tookInMs: number | undefined;
    while (performance.now() - started < TIMEOUT_MS) {
      const done = scenario.refused
        ? await metricSum(addresses.monitoringAddr, REJECTIONS) > rejectedBefore
        : await metricSum(addresses.monitoringAddr, CONFIG_EVENTS) - eventsBefore >=
          (scenario.configEvents ?? 0);
      if (done) {
        tookInMs = Math.round(performance.now() - started);
        break;
      }
      await sleep(200);
    }
    await sleep(SETTLE_MS);
    const { maxGapMs, answers, gapsOver50, topGapsAt, gapP50P90P99 } = await poll.stop();
    const cpuMs = Math.round((await cpuSeconds(server.child.pid) - cpuBefore) * 1000);
    const heapCollections = await metricSum(addresses.monitoringAddr, HEAP_COLLECTIONS);
    const load = [loadBefore, loadAverage()];
    const longestBusy = await profile;
    return {
      scenario: scenario.name,
      bytes,
      files: Object.keys(files).length,
      tookInMs: tookInMs ?? `not within ${TIMEOUT_MS} ms`,
      longestReadyGapMs: maxGapMs,
      gapsOver50ms: gapsOver50,
      gapP50P90P99,
      serverCpuMs: cpuMs,
      loadAverage: load,
      readyAnswers: answers,
      heapCollections,
      topGapsAt,
      ...(longestBusy !== undefined &&
        { profiledLongestBusyMs: longestBusy.busy, profiledLongestSampleGapMs: longestBusy.sampleGap }),
    };
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

const results: Record<string, unknown>[] = [];
for (const scenario of SCENARIOS) {
  if (values.only !== undefined && !scenario.name.includes(values.only)) continue;
  const result = await run(scenario);
  console.log(JSON.stringify(result));
  results.push(result);
}
console.table(results);
