/**
 * The load benchmark's replay phases: the captured responses replayed as raw bytes to fresh proxies, over
 * grpc-js (`baseline_server.ts`) and over the benchmark's own HTTP/2 server (`--own-h2`), with the floor per
 * message of a push (one small captured response written once to every stream) on each.
 *
 * @module
 */
import type { AwaitReply, ConnectReply, LineChannel } from "./agent_protocol.ts";
import { processMemory, startChild } from "./bench_processes.ts";
import { withCpu } from "./cpu_window.ts";
import { summarize } from "./latency_stats.ts";
import type { CpuUse, LoadReport, OwnH2Connect, ReplayFloor } from "./load_report.ts";
import { epochMs } from "./mesh_fixture.ts";
import { WATCHED_TYPES } from "./sim_proxy.ts";
import { TYPE_URL } from "../proto/type_urls.ts";

/** What the replay phases take from the run that starts them. */
export interface ReplayRun {
  /** How long a proxy may take to receive what it waits for. */
  readonly timeoutMs: number;
  /** The pause before each measured push, and after it for late arrivals. */
  readonly settleMs: number;
  /** With a directory, each replay server profiles its first EDS push into it. */
  readonly profileDir?: string;
  readonly profileSeconds: string;
  /** Prints a progress line. */
  readonly progress: (message: string) => void;
  /** The run's cleanups, newest first: each child started here is killed through them if the run stops. */
  readonly cleanups: (() => Promise<unknown>)[];
}

const ALL_TYPES = WATCHED_TYPES;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Replays the captured responses to the same number of fresh proxies and times the same push. */
export async function runBaseline(
  run: ReplayRun,
  captured: string,
  capturedPushes: string,
  pushSizes: Record<string, number>,
  agentArgs: string[],
  agentV8: string[],
  delta: boolean,
): Promise<LoadReport["baseline"]> {
  run.progress("baseline: replaying captured bytes");
  const profileFile = run.profileDir === undefined
    ? undefined
    : `${run.profileDir}/replay_grpc_js_eds.cpuprofile`;
  const serverArgs = ["--captured", captured, "--pushes", capturedPushes, ...(delta ? ["--delta"] : [])];
  return await withReplay(run, serverArgs, profileFile, agentArgs, agentV8, async (replay, agent) => {
    const replayPid = replay.child.pid;
    const [initial, initialCpu] = await withCpu(
      replayPid,
      agent.child.pid,
      () => agent.request<ConnectReply>({ cmd: "connect", timeoutMs: run.timeoutMs }),
    );
    const [pushed, push, pushCpu] = await measureReplayPush(run, replay, agent);
    run.progress(
      `baseline push: ${JSON.stringify(summarize(push.latencies))}, server write ${pushed.ms.toFixed(0)} ms`,
    );
    // The floor per message: one small captured response (an edit's RDS, an endpoint push's EDS) written
    // once to every stream, each ACKed, as a push of that type does.
    const floors: ReplayFloor[] = [];
    const kinds = [
      ["EDS", TYPE_URL.endpoint, "pushOne"],
      ["RDS", TYPE_URL.route, "pushOne"],
      // The same EDS response written to the HTTP/2 streams past grpc-js: item 3's best case.
      ["EDS", TYPE_URL.endpoint, "pushOneRaw"],
    ] as const;
    for (const [short, typeUrl, cmd] of kinds) {
      if (delta || pushSizes[short] === undefined) continue;
      const label = cmd === "pushOneRaw" ? `${short} past grpc-js` : short;
      floors.push(
        await measureFloor(run, replay, agent, { short, typeUrl, cmd, label, bytes: pushSizes[short] }),
      );
    }
    const replayMemory = processMemory(replayPid);
    await agent.request({ cmd: "close" });
    return {
      initial,
      push,
      serverWriteMs: pushed.ms,
      cpu: { initial: initialCpu, push: pushCpu },
      floors,
      peakRssKiB: replayMemory.peakRssKiB,
    };
  });
}

/** The replay server's arguments to profile its first EDS push into `file`, if any. */
function replayProfileArgs(run: ReplayRun, file: string | undefined): string[] {
  return file === undefined ? [] : ["--profile-push", file, "--profile-seconds", run.profileSeconds];
}

/** What the replay server needs to profile into `file`: the inspector (unscoped `--allow-sys`) and the file. */
function replayProfilePermissions(file: string | undefined): string[] {
  return file === undefined ? [] : ["--allow-sys", `--allow-write=${file}`];
}

/** The replay server writes every captured response to every stream; waits until every proxy has them all. */
async function measureReplayPush(
  run: ReplayRun,
  replay: LineChannel,
  agent: LineChannel,
): Promise<readonly [{ ms: number }, AwaitReply, CpuUse]> {
  await sleep(run.settleMs);
  await agent.request({ cmd: "record" });
  const since = epochMs();
  const [[pushed, push], cpu] = await withCpu(replay.child.pid, agent.child.pid, async () => {
    const pushed = await replay.request<{ ms: number }>({ cmd: "push" });
    const push = await agent.request<AwaitReply>({
      cmd: "await",
      since,
      types: ALL_TYPES,
      timeoutMs: run.timeoutMs,
      settleMs: run.settleMs,
    });
    return [pushed, push] as const;
  });
  return [pushed, push, cpu];
}

/** One floor to measure: a captured push response of a type, the replay command that writes it, its label. */
interface FloorKind {
  readonly short: string;
  readonly typeUrl: string;
  readonly cmd: "pushOne" | "pushOneRaw";
  readonly label: string;
  readonly bytes: number;
}

/**
 * Writes one small captured response once to every stream of `replay` and waits until every proxy of `agent`
 * has it (or has ended): the replay server's CPU per message, and whether every proxy got it.
 */
async function measureFloor(
  run: ReplayRun,
  replay: LineChannel,
  agent: LineChannel,
  kind: FloorKind,
): Promise<ReplayFloor> {
  await sleep(run.settleMs);
  await agent.request({ cmd: "record" });
  // By thread: what the replay server's native side (socket ops) and V8's collector add to its JS.
  const floorSince = epochMs();
  const [[written, arrived], floorCpu] = await withCpu(replay.child.pid, agent.child.pid, async () => {
    const written = await replay.request<{ pushed: number; ms: number }>({
      cmd: kind.cmd,
      short: kind.short,
    });
    const arrived = await agent.request<AwaitReply>({
      cmd: "await",
      since: floorSince,
      types: [kind.typeUrl],
      timeoutMs: run.timeoutMs,
      settleMs: 0,
    });
    return [written, arrived] as const;
  }, true);
  run.progress(
    `replay floor ${kind.label} (${kind.bytes} B x ${written.pushed}): ` +
      `${JSON.stringify(summarize(arrived.latencies))}, missing ${arrived.missing}, ended ` +
      `${JSON.stringify(arrived.ended)}, CPU server ${floorCpu.serverMs.toFixed(0)} ms`,
  );
  return {
    type: kind.label,
    bytes: kind.bytes,
    messages: written.pushed,
    latencies: arrived.latencies,
    serverWriteMs: written.ms,
    cpu: floorCpu,
    missing: arrived.missing,
    ended: arrived.ended,
  };
}

/**
 * Serves fresh proxies from the replay server on the benchmark's own HTTP/2 server (`--own-h2`) and measures
 * the EDS and RDS floors on it, as `runBaseline` does over grpc-js.
 */
export async function runOwnH2Floors(
  run: ReplayRun,
  captured: string,
  capturedPushes: string,
  pushSizes: Record<string, number>,
  agentArgs: string[],
  agentV8: string[],
): Promise<{ floors: ReplayFloor[]; connect: OwnH2Connect }> {
  run.progress("own HTTP/2: replaying captured bytes");
  // With --profile, the first EDS push of each replay transport is profiled (not the one a figure is quoted from).
  const profileFile = run.profileDir === undefined
    ? undefined
    : `${run.profileDir}/replay_own_h2_eds.cpuprofile`;
  const serverArgs = ["--captured", captured, "--pushes", capturedPushes, "--own-h2"];
  return await withReplay(run, serverArgs, profileFile, agentArgs, agentV8, async (replay, agent) => {
    const [initial, cpu] = await withCpu(
      replay.child.pid,
      agent.child.pid,
      () => agent.request<ConnectReply>({ cmd: "connect", timeoutMs: run.timeoutMs }),
    );
    run.progress(
      `own HTTP/2 connect: ${
        JSON.stringify(summarize(initial.latencies))
      }, incomplete ${initial.incomplete}, ` +
        `ended ${JSON.stringify(initial.ended)}, CPU server ${cpu.serverMs.toFixed(0)} ms`,
    );
    // As over grpc-js, the whole configuration is pushed once before the floors are measured.
    const [pushed, push, pushCpu] = await measureReplayPush(run, replay, agent);
    run.progress(
      `own HTTP/2 push: ${JSON.stringify(summarize(push.latencies))}, missing ${push.missing}, ` +
        `server write ${pushed.ms.toFixed(0)} ms, CPU server ${pushCpu.serverMs.toFixed(0)} ms`,
    );
    const floors: ReplayFloor[] = [];
    for (const [short, typeUrl] of [["EDS", TYPE_URL.endpoint], ["RDS", TYPE_URL.route]] as const) {
      if (pushSizes[short] === undefined) continue;
      const label = `${short} on own HTTP/2`;
      floors.push(
        await measureFloor(run, replay, agent, {
          short,
          typeUrl,
          cmd: "pushOne",
          label,
          bytes: pushSizes[short],
        }),
      );
    }
    const peakRssKiB = processMemory(replay.child.pid).peakRssKiB;
    await agent.request({ cmd: "close" });
    return { floors, connect: { initial, cpu, push, pushCpu, peakRssKiB } };
  });
}

/**
 * Starts the replay server with `serverArgs` (and the profile arguments for `profileFile`) and a load process
 * connected to it, runs `measure` with both, and closes both however it ends (a crash of the benchmark kills
 * them through `run.cleanups`).
 */
async function withReplay<T>(
  run: ReplayRun,
  serverArgs: string[],
  profileFile: string | undefined,
  agentArgs: string[],
  agentV8: string[],
  measure: (replay: LineChannel, agent: LineChannel) => Promise<T>,
): Promise<T> {
  const replay = startChild("baseline_server.ts", [...serverArgs, ...replayProfileArgs(run, profileFile)], {
    permissions: replayProfilePermissions(profileFile),
  });
  const killReplay = () => replay.kill();
  run.cleanups.unshift(killReplay);
  try {
    const { port } = await replay.next<{ port: number }>();
    const agent = startChild("load_agent.ts", ["--addr", `127.0.0.1:${port}`, ...agentArgs], {
      v8Flags: agentV8,
    });
    const killAgent = () => agent.kill();
    run.cleanups.unshift(killAgent);
    try {
      await agent.next();
      return await measure(replay, agent);
    } finally {
      await agent.close();
      run.cleanups.splice(run.cleanups.indexOf(killAgent), 1);
    }
  } finally {
    await replay.send({ cmd: "close" }).catch(() => {});
    await replay.close();
    run.cleanups.splice(run.cleanups.indexOf(killReplay), 1);
  }
}
