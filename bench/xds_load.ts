/**
 * The xDS load benchmark. Writes a mesh (services in namespaces of ten, three WorkloadEntries each, a
 * VirtualService and a DestinationRule with subsets) to a temp config dir, starts the real
 * `mesh-discovery discovery` on free loopback ports, and a separate load process with N simulated
 * proxyless gRPC proxies. Measures time to first full config, full-push and endpoint-only convergence after
 * edits on disk, a full push from `/debug/adsz?push=true`, peak server RSS, an optional reconnect storm, and
 * the same bytes replayed by a baseline server. Prints a Markdown report; `--json FILE` writes the figures.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-write --allow-env --allow-run=deno,cat,sh \
 *     bench/xds_load.ts --proxies 1000 [--services 1000] [--rounds 3] [--delta] [--listeners all|K]
 *     [--reconnect] [--no-baseline] [--json FILE] [--server-flags="--flag value"]
 *     [--profile DIR [--profile-seconds 8] [--profile-kind cpu|allocs|promoted]] [--timeout-s 180]
 *     [--settle-ms 1000] [--server-v8-flags=--flag,--flag] [--server-log FILE] [--envoy]
 *     [--client-window BYTES]
 *
 * DISCOVERY_DEBOUNCE_AFTER, DISCOVERY_PUSH_THROTTLE and DISCOVERY_XDS_SEND_TIMEOUT pass through to the server.
 *
 * @module
 */
import { sampleMemory } from "./memory_sampler.ts";
import { parseArgs } from "node:util";
import { TYPE_URL } from "../proto/type_urls.ts";
import {
  discoveryAddresses,
  discoveryArgs,
  RunningProgram,
  startProgram,
} from "../tests/helpers/programs.ts";
import type { AwaitReply, ConnectReply } from "./agent_protocol.ts";
import {
  loadAverage,
  machineInfo,
  processCpuMs,
  processMemory,
  startChild,
  threadCpuMs,
} from "./bench_processes.ts";
import { summarize } from "./latency_stats.ts";
import { threadCpuSince, withCpu } from "./cpu_window.ts";
import { type ReplayRun, runBaseline, runOwnH2Floors } from "./replay_runs.ts";
import { type CpuUse, type LoadReport, renderReport, type RoundResult } from "./load_report.ts";
import { HEAP_COLLECTIONS, metricSum } from "./server_metric.ts";
import {
  clusterNames,
  epochMs,
  INITIAL_KNOBS,
  listenerName,
  meshService,
  rewriteService,
  SERVICE_PORT,
  type ServiceKnobs,
  writeMesh,
  writeNamespaceSidecars,
} from "./mesh_fixture.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    proxies: { type: "string", default: "1000" },
    services: { type: "string", default: "1000" },
    rounds: { type: "string", default: "3" },
    delta: { type: "boolean", default: false },
    listeners: { type: "string", default: "all" },
    envoy: { type: "boolean", default: false },
    "client-window": { type: "string" },
    "sidecar-scope": { type: "boolean", default: false },
    reconnect: { type: "boolean", default: false },
    "no-baseline": { type: "boolean", default: false },
    server: { type: "string", default: "real" },
    json: { type: "string" },
    "timeout-s": { type: "string", default: "180" },
    "settle-ms": { type: "string", default: "1000" },
    profile: { type: "string" },
    "server-flags": { type: "string", default: "" },
    "profile-seconds": { type: "string", default: "8" },
    "profile-kind": { type: "string", default: "cpu" },
    "server-v8-flags": { type: "string", default: "" },
    "server-log": { type: "string" },
  },
});

const proxies = Number(flags.proxies);
const services = Number(flags.services);
const rounds = Number(flags.rounds);
const timeoutMs = Number(flags["timeout-s"]) * 1000;
const settleMs = Number(flags["settle-ms"]);
const delta = flags.delta;
/**
 * Envoy's default HTTP/2 initial stream and connection windows (`Http2ProtocolOptions`, 256 MiB), which its
 * ADS client to the control plane keeps unless the bootstrap says otherwise: `--envoy` proxies grant them
 * unless `--client-window` says otherwise (`--client-window 65535` gives grpc-js's default).
 */
const ENVOY_WINDOW_BYTES = 268_435_456;
const clientWindow = flags["client-window"] ?? (flags.envoy ? String(ENVOY_WINDOW_BYTES) : undefined);
const ALL_TYPES = [TYPE_URL.cluster, TYPE_URL.endpoint, TYPE_URL.listener, TYPE_URL.route];
const progress = (msg: string) =>
  console.error(`[xds_load ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Server environment: everything default except what the benchmark must set. */
// The debug push is a state-changing admin action: the server must allow admin endpoints.
const SERVER_ENV: Record<string, string> = { ENABLE_ADMIN_ENDPOINTS: "true" };
// Every simulated proxy connects from 127.0.0.1, where a fleet comes from one address each: the per-peer bounds
// (and, past 10,000 proxies, the server-wide ones) must hold them all, with room for a reconnect storm's overlap.
const ADMISSION_BOUND = String(Math.max(20_000, 2 * proxies));
for (
  const name of [
    "DISCOVERY_XDS_MAX_CONNECTIONS",
    "DISCOVERY_XDS_MAX_CONNECTIONS_PER_PEER",
    "DISCOVERY_XDS_MAX_STREAMS",
    "DISCOVERY_XDS_MAX_STREAMS_PER_PEER",
    "DISCOVERY_XDS_CONNECTION_RATE_PER_PEER",
  ]
) SERVER_ENV[name] = ADMISSION_BOUND;
for (const name of ["DISCOVERY_DEBOUNCE_AFTER", "DISCOVERY_PUSH_THROTTLE", "DISCOVERY_XDS_SEND_TIMEOUT"]) {
  const value = Deno.env.get(name);
  if (value !== undefined) SERVER_ENV[name] = value;
}

/** Polls `url` until it answers 200; fails when the deadline passes or the server exits first. */
async function waitReady(url: string, server: RunningProgram, deadlineMs: number): Promise<void> {
  let exited = false;
  server.child.status.then(() => exited = true);
  while (epochMs() < deadlineMs && !exited) {
    try {
      const response = await fetch(url);
      await response.body?.cancel();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  const why = exited ? "the server exited" : "the deadline passed";
  throw new Error(`Server not ready at ${url}: ${why}:\n${server.stdout}\n${server.stderr}`);
}

function startServer(configDir: string) {
  const addresses = discoveryAddresses();
  const extra = ["--registries", "Mock", "--configDir", configDir, "--log_output_level", "all:warn"];
  if (flags.profile !== undefined) extra.push("--profile");
  extra.push(...flags["server-flags"]!.split(/\s+/).filter((f) => f !== ""));
  const v8Flags = flags["server-v8-flags"];
  const env = v8Flags === "" ? SERVER_ENV : { ...SERVER_ENV, DENO_V8_FLAGS: v8Flags };
  return { addresses, server: startProgram("mesh-discovery", discoveryArgs(addresses, extra), env) };
}

/**
 * Waits until the server uses less than a tenth of a core over half a second (its memory sampler and
 * keepalive pings go on), or 30 s have passed: what an earlier phase left running must not be counted in the
 * next.
 */
async function serverIdle(server: number): Promise<void> {
  const deadline = epochMs() + 30_000;
  let last = processCpuMs(server);
  while (epochMs() < deadline) {
    await sleep(500);
    const now = processCpuMs(server);
    if (now - last < 50) return;
    last = now;
  }
  progress("the server did not go idle within 30 s; measuring the next round anyway");
}

/** How long the server's CPU is measured with every proxy connected and nothing changing. */
const IDLE_MS = 10_000;

/** Profiles `--profile-kind` can take: the server's route and the saved file's extension. */
const PROFILE_KINDS: Record<string, { path: string; ext: string }> = {
  cpu: { path: "/debug/pprof/profile?", ext: "cpuprofile" },
  allocs: { path: "/debug/pprof/allocs?", ext: "heapprofile" },
  promoted: { path: "/debug/pprof/allocs?promoted=true&", ext: "heapprofile" },
};
const profileKind = PROFILE_KINDS[flags["profile-kind"]];
if (profileKind === undefined) {
  throw new RangeError(
    `Invalid --profile-kind "${flags["profile-kind"]}": expected one of ${
      Object.keys(PROFILE_KINDS).join(", ")
    }`,
  );
}

/**
 * With `--profile DIR`, starts a profile of the server (`--profile-kind`: CPU, allocations, or only the
 * allocations that outlived a young-generation collection) for `--profile-seconds` and returns a promise that
 * saves it as `DIR/<name>.cpuprofile` or `.heapprofile`; otherwise a resolved promise.
 */
function profileServer(monitoringAddr: string, name: string): Promise<void> {
  if (flags.profile === undefined) return Promise.resolve();
  const seconds = flags["profile-seconds"];
  return (async () => {
    const response = await fetch(`http://${monitoringAddr}${profileKind.path}seconds=${seconds}`);
    const file = `${flags.profile}/${name}.${profileKind.ext}`;
    await Deno.mkdir(flags.profile!, { recursive: true });
    await Deno.writeTextFile(file, await response.text());
    progress(`saved ${file}`);
  })();
}

/**
 * With `--profile DIR`, saves a heap snapshot of the server as `DIR/<name>.heapsnapshot` (open it in Chrome
 * DevTools, or sum it by constructor) while every proxy is still connected; otherwise does nothing.
 */
async function saveHeapSnapshot(monitoringAddr: string, name: string): Promise<void> {
  if (flags.profile === undefined) return;
  const response = await fetch(`http://${monitoringAddr}/debug/pprof/heap`);
  await Deno.mkdir(flags.profile, { recursive: true });
  // Streamed to the file: at 10,000 proxies the snapshot is longer than V8's longest string.
  await response.body?.pipeTo(
    (await Deno.open(`${flags.profile}/${name}.heapsnapshot`, { write: true, create: true, truncate: true }))
      .writable,
  );
  progress(`saved ${flags.profile}/${name}.heapsnapshot`);
}

/** What one kind of edit changes, which types it must reach, and how to check proxy 0 got it. */
interface EditKind {
  readonly label: string;
  readonly next: (k: ServiceKnobs, round: number) => ServiceKnobs;
  readonly types: readonly string[];
  readonly inspect: { typeUrl: string; name: string; expect: (k: ServiceKnobs) => RegExp };
}

const target = meshService(0);
const EDITS: readonly EditKind[] = [
  {
    label: "VirtualService weights (full push)",
    next: (k, r) => ({ ...k, v1Weight: r % 2 === 0 ? 50 : 90 }),
    // Pushes send only the types whose resources changed (SotW too, since 2026-11-26).
    types: [TYPE_URL.route],
    inspect: {
      typeUrl: TYPE_URL.route,
      // An Envoy sidecar's routes are one configuration per port; a proxyless client's, one per target.
      name: flags.envoy ? String(SERVICE_PORT) : listenerName(target),
      expect: (k) => new RegExp(`"value":${k.v1Weight}\\b`),
    },
  },
  {
    label: "DestinationRule lb policy (full push)",
    next: (k) => ({ ...k, lb: k.lb === "ROUND_ROBIN" ? "LEAST_CONN" : "ROUND_ROBIN" }),
    // A state-of-the-world push resends EDS with CDS: Envoy warms an updated cluster until EDS names it.
    types: delta ? [TYPE_URL.cluster] : [TYPE_URL.cluster, TYPE_URL.endpoint],
    inspect: {
      typeUrl: TYPE_URL.cluster,
      name: clusterNames(target)[0],
      expect: (k) =>
        k.lb === "LEAST_CONN" ? /"lb_policy":"LEAST_REQUEST"/ : /^(?!.*"lb_policy":"LEAST_REQUEST")/,
    },
  },
  {
    label: "WorkloadEntry weight (endpoint-only)",
    next: (k) => ({ ...k, firstEndpointWeight: k.firstEndpointWeight === 1 ? 2 : 1 }),
    types: [TYPE_URL.endpoint],
    inspect: {
      typeUrl: TYPE_URL.endpoint,
      name: clusterNames(target)[0],
      expect: (k) => new RegExp(`"load_balancing_weight":\\{"value":${k.firstEndpointWeight}\\}`),
    },
  },
];

async function main(): Promise<LoadReport> {
  const machine = machineInfo();
  const root = await Deno.makeTempDir({ prefix: "xds_load_" });
  const configDir = `${root}/config`;
  const scratch = `${root}/scratch`;
  const captured = `${root}/captured`;
  const capturedPushes = `${root}/captured_pushes`;
  await Promise.all([
    Deno.mkdir(configDir),
    Deno.mkdir(scratch),
    Deno.mkdir(captured),
    Deno.mkdir(capturedPushes),
  ]);
  cleanups.push(() => Deno.remove(root, { recursive: true }));
  const agentArgs = [
    "--proxies",
    String(proxies),
    "--services",
    String(services),
    "--listeners",
    flags.listeners!,
  ];
  if (delta) agentArgs.push("--delta");
  if (flags.envoy) agentArgs.push("--envoy");
  if (clientWindow !== undefined) agentArgs.push("--client-window", clientWindow);
  const agentV8 = proxies > 2000 ? ["--max-old-space-size=16384"] : [];
  // The load process writes its connect profile there before the server's first one is saved.
  if (flags.profile !== undefined) await Deno.mkdir(flags.profile, { recursive: true });
  try {
    progress(`writing ${services} services to ${configDir}`);
    await writeMesh(configDir, services);
    // Each namespace's Sidecar also imports the edited service, so every edit reaches every proxy.
    if (flags["sidecar-scope"]) await writeNamespaceSidecars(configDir, services, target);
    const { addresses, server } = startServer(configDir);
    let diedAlone = false;
    server.child.status.then(() => diedAlone = true);
    const stopServer = async () => {
      const died = diedAlone;
      const status = await server.stop();
      // A server that exited before we stopped it died during the run: show why.
      if (died) {
        const tail = (server.stdout + server.stderr).split("\n").slice(-40).join("\n");
        progress(
          `server exited by itself (code ${status.code}, signal ${status.signal}); last output:\n${tail}`,
        );
      }
    };
    cleanups.unshift(stopServer);
    const spawned = epochMs();
    // The real server answers /ready on --httpAddr; the in-process stand-in serves everything on one port.
    const readyAddr = addresses.httpAddr;
    await waitReady(`http://${readyAddr}/ready`, server, spawned + timeoutMs);
    const startupMs = epochMs() - spawned;
    const pid = server.child.pid;
    progress(`server ready in ${startupMs.toFixed(0)} ms (pid ${pid}, ${processMemory(pid).rssKiB} KiB)`);

    const memory = sampleMemory(`127.0.0.1:${addresses.ctrlzPort}`);
    cleanups.unshift(() => memory.stop());
    // A CPU profile of the server's connect comes with one of the load process's.
    const agentProfile = flags.profile !== undefined && flags["profile-kind"] === "cpu"
      ? `${flags.profile}/load_connect.cpuprofile`
      : undefined;
    const agent = startChild(
      "load_agent.ts",
      [
        "--addr",
        addresses.grpcAddr,
        ...agentArgs,
        ...(agentProfile === undefined
          ? []
          : ["--profile-connect", agentProfile, "--profile-seconds", flags["profile-seconds"]!]),
      ],
      {
        v8Flags: agentV8,
        permissions: [
          `--allow-write=${captured},${capturedPushes}${
            agentProfile === undefined ? "" : `,${agentProfile}`
          }`,
          ...(agentProfile === undefined ? [] : ["--allow-sys"]),
        ],
      },
    );
    cleanups.unshift(() => agent.kill());
    await agent.next();
    progress(`connecting ${proxies} proxies`);
    const agentPid = agent.child.pid;
    const cpu: Record<string, CpuUse> = {};
    let initial: ConnectReply;
    const connectProfile = profileServer(addresses.monitoringAddr, "connect");
    await sleep(flags.profile === undefined ? 0 : 100);
    [initial, cpu.initial] = await withCpu(
      pid,
      agentPid,
      () => agent.request({ cmd: "connect", timeoutMs }),
      true,
    );
    await connectProfile;
    progress(
      `initial: ${JSON.stringify(summarize(initial.latencies))}, incomplete ${initial.incomplete}, ` +
        `ended ${JSON.stringify(initial.ended)}`,
    );
    const afterConnect = processMemory(pid);
    await sleep(settleMs);

    // A delta stream is sent only what changed, so a push of an unchanged snapshot sends nothing: skipped.
    let debugPush: AwaitReply | undefined;
    if (!delta) {
      await agent.request({ cmd: "record" });
      const debugProfile = profileServer(addresses.monitoringAddr, "debug_push");
      await sleep(flags.profile === undefined ? 0 : 100);
      // The push runs partly before the HTTP answer comes back, so CPU is counted from before the request.
      const [reply, debugCpu] = await withCpu(pid, agentPid, async () => {
        const pushStarted = epochMs();
        const pushResponse = await fetch(`http://${addresses.monitoringAddr}/debug/adsz?push=true`, {
          method: "POST",
        });
        await pushResponse.body?.cancel();
        if (!pushResponse.ok) throw new Error(`Debug push refused: ${pushResponse.status}`);
        return await agent.request<AwaitReply>({
          cmd: "await",
          since: pushStarted,
          types: ALL_TYPES,
          timeoutMs,
          settleMs,
        });
      }, true);
      debugPush = reply;
      cpu.debugPush = debugCpu;
      progress(
        `debug push: ${JSON.stringify(summarize(reply.latencies))} ended ${JSON.stringify(reply.ended)}`,
      );
      await debugProfile;
    }
    // Before any edit, so a delta proxy's latest responses are still its whole first configuration.
    const capturedSizes = (await agent.request<{ captured: Record<string, number> }>({
      cmd: "capture",
      dir: captured,
    })).captured;

    const changes: Record<string, RoundResult[]> = {};
    let knobs = INITIAL_KNOBS;
    for (const edit of EDITS) {
      changes[edit.label] = [];
      for (let r = 0; r < rounds; r++) {
        knobs = edit.next(knobs, r);
        // A push the previous round's wait did not see out (a second wave of EDS) would count in this one.
        await serverIdle(pid);
        await agent.request({ cmd: "record" });
        const editProfile = r === 0
          ? profileServer(addresses.monitoringAddr, `edit_${EDITS.indexOf(edit)}`)
          : undefined;
        if (editProfile) await sleep(100);
        const before = [processCpuMs(pid), processCpuMs(agentPid)];
        const threadsBefore = threadCpuMs(pid);
        const since = await rewriteService(configDir, scratch, target, knobs);
        const result = await agent.request<AwaitReply>({
          cmd: "await",
          since,
          types: edit.types,
          timeoutMs,
          settleMs,
        });
        const roundCpu = {
          serverMs: processCpuMs(pid) - before[0],
          loadMs: processCpuMs(agentPid) - before[1],
          serverThreads: threadCpuSince(threadsBefore, pid),
        };
        let verified: boolean | undefined;
        if (!delta) {
          const { resource } = await agent.request<{ resource: unknown }>({
            cmd: "inspect",
            typeUrl: edit.inspect.typeUrl,
            name: edit.inspect.name,
          });
          verified = resource !== null && edit.inspect.expect(knobs).test(JSON.stringify(resource));
        }
        await editProfile;
        changes[edit.label].push({ ...result, verified, cpu: roundCpu });
        progress(
          `${edit.label} #${r + 1}: ${JSON.stringify(summarize(result.latencies))} ` +
            `missing ${result.missing} arrivals ${JSON.stringify(result.arrivals)} verified ${verified} ` +
            `ended ${JSON.stringify(result.ended)}`,
        );
      }
    }

    // Proxy 0's latest responses are now the edits' small ones: a route push's RDS, an endpoint push's EDS.
    const pushSizes = (await agent.request<{ captured: Record<string, number> }>({
      cmd: "capture",
      dir: capturedPushes,
    })).captured;

    // What every proxy costs while nothing changes: keepalive pings and their timers, the memory sampler.
    await serverIdle(pid);
    [, cpu.idle] = await withCpu(pid, agentPid, () => sleep(IDLE_MS), true);

    let reconnect: ConnectReply | undefined;
    if (flags.reconnect) {
      progress(`reconnecting ${proxies} proxies at once`);
      const [storm, stormCpu] = await withCpu(
        pid,
        agentPid,
        () => agent.request<ConnectReply>({ cmd: "reconnect", timeoutMs }),
      );
      reconnect = storm;
      cpu.reconnect = stormCpu;
      progress(`reconnect: ${JSON.stringify(summarize(storm.latencies))}, incomplete ${storm.incomplete}`);
    }
    const serverMemory = processMemory(pid);
    const memoryPeaks = await memory.stop();
    const heapCollections = await metricSum(addresses.monitoringAddr, HEAP_COLLECTIONS);
    await saveHeapSnapshot(addresses.monitoringAddr, "after_rounds");
    if (flags["server-log"]) await Deno.writeTextFile(flags["server-log"], server.stdout + server.stderr);
    const complaints = (server.stdout + server.stderr).split("\n").filter((l) => /\b(warn|error)\b/i.test(l));
    if (complaints.length > 0) {
      progress(
        `server logged ${complaints.length} warnings/errors; first ones:\n${
          complaints.slice(0, 10).join("\n")
        }`,
      );
    }
    await agent.request({ cmd: "close" });
    await agent.close();
    cleanups.splice(0, 3);
    await stopServer();

    let baseline: LoadReport["baseline"];
    if (!flags["no-baseline"]) {
      baseline = await runBaseline(replayRun, captured, capturedPushes, pushSizes, agentArgs, agentV8, delta);
      // The same floors on the benchmark's own HTTP/2 server, to fresh proxies once the replay's are gone.
      if (!delta && baseline !== undefined) {
        const ownH2 = await runOwnH2Floors(
          replayRun,
          captured,
          capturedPushes,
          pushSizes,
          agentArgs,
          agentV8,
        );
        baseline = { ...baseline, floors: [...baseline.floors ?? [], ...ownH2.floors], ownH2: ownH2.connect };
      }
    }
    return {
      date: new Date().toISOString(),
      machine: { ...machine, loadAverageAfter: loadAverage() },
      config: {
        proxies,
        services,
        rounds,
        protocol: delta ? "delta" : "sotw",
        listeners: flags.listeners!,
        server: flags.server! + (flags["server-flags"] ? ` ${flags["server-flags"]}` : ""),
        env: SERVER_ENV,
      },
      startupMs,
      initial,
      cpu,
      afterConnect,
      debugPush,
      capturedSizes,
      changes,
      serverMemory,
      memoryPeaks,
      heapCollections,
      reconnect,
      baseline,
    };
  } finally {
    await runCleanups();
  }
}

/** Stops what the run started, newest first; each step runs once. */
const cleanups: (() => Promise<unknown>)[] = [];

/** What the replay phases take from this run. */
const replayRun: ReplayRun = {
  timeoutMs,
  settleMs,
  profileDir: flags.profile,
  profileSeconds: flags["profile-seconds"]!,
  progress,
  cleanups,
};

let cleaning: Promise<void> | undefined;

/** Runs the cleanups once; a signal and main's `finally` both wait for the same run. */
function runCleanups(): Promise<void> {
  cleaning ??= (async () => {
    for (let cleanup = cleanups.shift(); cleanup !== undefined; cleanup = cleanups.shift()) {
      try {
        await cleanup();
      } catch (error) {
        progress(`cleanup failed: ${(error as Error).message}`);
      }
    }
  })();
  return cleaning;
}

if (import.meta.main) {
  // A signal ends the run through main's cleanup (servers, agents, temp dir) rather than abandoning them.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(signal, async () => {
      progress(`${signal}: stopping the server and load processes, removing the temp dir`);
      await runCleanups();
      Deno.exit(130);
    });
  }
  const report = await main();
  if (flags.json !== undefined) await Deno.writeTextFile(flags.json, JSON.stringify(report, null, 2) + "\n");
  console.log(renderReport(report));
}
