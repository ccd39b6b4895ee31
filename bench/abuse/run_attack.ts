/**
 * Runs one attack against a fresh server: starts it on a small mesh, a `/ready` prober, an RSS watch and a
 * healthy proxy with pushes; measures idle RSS; lets the attacker process run (bounded); waits `afterS` once
 * it has left, `rounds` times over; then collects the figures and stops everything.
 *
 * @module
 */
import { join } from "node:path";
import { jsonLines } from "../agent_protocol.ts";
import { processMemory, startChild } from "../bench_processes.ts";
import { writeMesh } from "../mesh_fixture.ts";
import { makePluggedInCa, writePluggedInCa } from "../../shared/testing/plugged_in_ca.ts";
import { startAbuseServer, writeInjectorFiles } from "./abuse_server.ts";
import type { Attack, Sizes } from "./attack_catalog.ts";
import { PushCheck, type PushSummary } from "./push_check.ts";
import { ReadyProbe, type ReadySummary } from "./ready_probe.ts";
import { RssWatch } from "./rss_watch.ts";
import { describeChange, type MemoryBreakdown, memoryBreakdown } from "./memory_breakdown.ts";
import { saveMemorySnapshot } from "./memory_snapshot.ts";

/** The figures of one attack. */
export interface AttackResult {
  readonly name: string;
  readonly sizes: Sizes;
  readonly idleMiB: number;
  readonly peakMiB: number;
  /** RSS `afterS` after the attacker left (its last round); undefined when the server was gone. */
  readonly afterMiB: number | undefined;
  /** With `rounds` above 1, RSS `afterS` after each round, in order. */
  readonly afterByRoundMiB?: readonly number[];
  readonly afterS: number;
  readonly ready: ReadySummary;
  readonly pushes: PushSummary | undefined;
  readonly alive: boolean;
  /** Why the server is not alive: its exit, or the harness's kill. */
  readonly death?: string;
  /** Server log output while the attacker ran. */
  readonly logLines: number;
  /** The attack's bound on `logLines`, when it has one. */
  readonly maxLogLines?: number;
  readonly logBytes: number;
  readonly attackSeconds: number;
  /** Whether the attacker finished by itself, or was ended at its time bound. */
  readonly attackerEnded: "finished" | "time bound" | "exited";
  /** What the attacker reported. */
  readonly notes: Record<string, unknown>;
  /** Where the memory lay at idle and `afterS` after the attacker left (absent when the server was gone). */
  readonly memory?: { readonly idle: MemoryBreakdown; readonly after?: MemoryBreakdown };
  /** The CPU profiles taken while the attacker ran (`--profile-s`). */
  readonly profiles?: readonly string[];
  /** When the attacker started and ended (epoch ms), to place the probe's failures. */
  readonly phases?: { readonly attackStartedAt: number; readonly attackerEndedAt: number };
  /** The server's `http_server_refused` samples once the attacker ended. */
  readonly refusals?: readonly string[];
}

/** How to run. */
export interface RunOptions {
  readonly afterS: number;
  readonly idleS: number;
  readonly rssLimitMiB: number;
  readonly pushEveryMs: number;
  /** Extra environment of the server (`--server-env`), such as glibc's malloc tunables. */
  readonly serverEnv?: Readonly<Record<string, string>>;
  /** Seconds of CPU profile to take from the attacker's start (`--profile-s`), in files of `profileDir`. */
  readonly profileS?: number;
  readonly profileDir?: string;
  /**
   * Where to save smaps, `/debug/cachez`, `/memj/` at idle and after, then a heap snapshot and the server's log
   * (`--diagnose-dir`); the server then runs with `--profile`, and the snapshot is taken after every figure was
   * read (it inflates the server's memory).
   */
  readonly diagnoseDir?: string;
  /** Times to run the attack against the same server (`--rounds`), each followed by `afterS`; default 1. */
  readonly rounds?: number;
  /** Where to save the server's whole log (`--server-log-dir`), as `<attack>-server.log`. */
  readonly serverLogDir?: string;
  readonly log: (message: string) => void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A wait of `ms` that can be called off: a bound raced against an attack whose timer, left running, would keep
 * the harness alive (holding the benchmark lock) for minutes after its report was written.
 */
function cancellableWait(ms: number): { readonly done: Promise<void>; cancel(): void } {
  let id: ReturnType<typeof setTimeout> | undefined;
  const done = new Promise<void>((resolve) => id = setTimeout(resolve, ms));
  return { done, cancel: () => clearTimeout(id) };
}
const ONE_DAY = 24 * 3_600_000;

/** Runs `attack` with `sizes`. */
export async function runAttack(attack: Attack, sizes: Sizes, options: RunOptions): Promise<AttackResult> {
  const dir = await Deno.makeTempDir({ prefix: "mesh_abuse_" });
  const configDir = join(dir, "config");
  const scratchDir = join(dir, "scratch");
  await Deno.mkdir(configDir);
  await Deno.mkdir(scratchDir);
  await writeMesh(configDir, Math.max(1, attack.services(sizes)));
  const env: Record<string, string> = { ...options.serverEnv };
  let caDir: string | undefined;
  if (attack.needsCa) {
    caDir = join(dir, "ca");
    await Deno.mkdir(caDir);
    await writePluggedInCa(await makePluggedInCa(30 * ONE_DAY), caDir);
    env.ROOT_CA_DIR = caDir;
  }
  // The injector's files are read relative to the server's working directory: the run's temp dir then.
  if (attack.needsInjector) await writeInjectorFiles(dir);
  const profileS = options.profileS ?? 0;
  const diagnose = options.diagnoseDir === undefined ? undefined : join(options.diagnoseDir, attack.name);
  // The directories are made before the attack, so a missing one cannot lose the attack's result at its end.
  for (const dir of [options.diagnoseDir, options.serverLogDir]) {
    if (dir !== undefined) await Deno.mkdir(dir, { recursive: true });
  }
  const server = await startAbuseServer({
    configDir,
    env,
    fdLimit: attack.fdLimit,
    profile: profileS > 0 || diagnose !== undefined,
    ...(attack.needsInjector && { workDir: dir }),
  });
  const { addresses, pid, program } = server;
  const rss = new RssWatch(pid, options.rssLimitMiB, () => program.child.kill("SIGKILL"));
  const ready = new ReadyProbe(`http://${addresses.httpAddr}/ready`);
  const pushes = new PushCheck(addresses.grpcAddr, configDir, scratchDir, options.pushEveryMs);
  let pushSummary: PushSummary | undefined;
  try {
    await pushes.start();
    await sleep(options.idleS * 1000);
    const idleMiB = Math.round(processMemory(pid).rssKiB / 1024);
    const idleMemory = await memoryBreakdown(pid, addresses.ctrlzPort);
    if (diagnose) await saveMemorySnapshot({ pid, ...addresses }, `${diagnose}-idle`, false);
    const logBefore = logSize(program.stdout + program.stderr);
    options.log(`${attack.name}: idle ${idleMiB} MiB; attacking with ${JSON.stringify(sizes)}`);
    const attackStartedAt = Date.now();
    const profiles = profileS > 0
      ? takeProfiles(addresses.httpAddr, profileS, join(options.profileDir ?? ".", attack.name), options.log)
      : Promise.resolve([]);
    const notes: Record<string, unknown> = {};
    const rounds = Math.max(1, options.rounds ?? 1);
    const afterByRoundMiB: number[] = [];
    let attackerEnded: AttackResult["attackerEnded"] = "exited";
    let attackerEndedAt = attackStartedAt;
    let refusals: string[] = [];
    let attackSeconds = 0;
    let afterMemory: MemoryBreakdown | undefined;
    const logAfter = { lines: logBefore.lines, bytes: logBefore.bytes };
    // Each round attacks the same server again once the last round's figures are read: what a round leaves
    // and the next adds is told apart from what the first left.
    for (let round = 1; round <= rounds && !server.hasExited(); round++) {
      const label = rounds === 1 ? attack.name : `${attack.name} round ${round}`;
      const roundStarted = performance.now();
      const roundLogBefore = logSize(program.stdout + program.stderr);
      const launch = attack.launch({ ...addresses, caDir }, sizes);
      const child = startChild(launch.script, launch.args, { permissions: launch.permissions });
      const replies = (async () => {
        for await (const line of jsonLines(child.child.stdout, (l) => options.log(`[attacker] ${l}`))) {
          Object.assign(notes, line.done ?? line);
          if (line.done !== undefined || line.error !== undefined) return "finished" as const;
        }
        return "exited" as const;
      })();
      const bound = cancellableWait(attack.timeoutS(sizes) * 1000);
      attackerEnded = await Promise.race([
        replies,
        bound.done.then(() => "time bound" as const),
        server.exited.then(() => "exited" as const),
      ]).finally(() => bound.cancel());
      await child.kill();
      attackerEndedAt = Date.now();
      refusals = await refusalSamples(addresses.monitoringAddr);
      const roundSeconds = Math.round((performance.now() - roundStarted) / 1000);
      attackSeconds += roundSeconds;
      const roundLogAfter = logSize(program.stdout + program.stderr);
      logAfter.lines += roundLogAfter.lines - roundLogBefore.lines;
      logAfter.bytes += roundLogAfter.bytes - roundLogBefore.bytes;
      options.log(`${label}: attacker ${attackerEnded} after ${roundSeconds} s; waiting ${options.afterS} s`);
      const after = cancellableWait(options.afterS * 1000);
      await Promise.race([after.done, server.exited]).finally(() => after.cancel());
      if (server.hasExited()) break;
      afterByRoundMiB.push(Math.round(processMemory(pid).rssKiB / 1024));
      afterMemory = await memoryBreakdown(pid, addresses.ctrlzPort);
      options.log(`${label}: memory idle → after: ${describeChange(idleMemory, afterMemory)}`);
    }
    if (afterMemory && diagnose) {
      await saveMemorySnapshot({ pid, ...addresses }, `${diagnose}-after`, true);
      await Deno.writeTextFile(`${diagnose}-server.log`, program.stdout + program.stderr);
    }
    pushSummary = await pushes.stop();
    const readySummary = await ready.stop();
    if (options.serverLogDir) {
      await Deno.writeTextFile(
        join(options.serverLogDir, `${attack.name}-server.log`),
        program.stdout + program.stderr,
      );
    }
    await rss.stop();
    const killed = rss.killedAtMiB;
    const exitStatus = server.hasExited() ? await server.exited : undefined;
    if (exitStatus !== undefined && killed === undefined) {
      options.log(
        `${attack.name}: the server exited; its stderr ended with:\n${program.stderr.slice(-2000)}`,
      );
    }
    return {
      name: attack.name,
      sizes,
      idleMiB,
      peakMiB: rss.peakMiB,
      // A round the server did not outlive has no figure: undefined says the server was gone.
      afterMiB: afterByRoundMiB.length === rounds ? afterByRoundMiB.at(-1) : undefined,
      afterS: options.afterS,
      ...(rounds > 1 && { afterByRoundMiB }),
      ready: readySummary,
      pushes: pushSummary,
      alive: exitStatus === undefined,
      ...(killed !== undefined
        ? { death: `killed by harness at ${killed} MB` }
        : exitStatus !== undefined
        ? { death: `exited: code ${exitStatus.code}${exitStatus.signal ? ` ${exitStatus.signal}` : ""}` }
        : {}),
      logLines: logAfter.lines - logBefore.lines,
      ...(attack.maxLogLines !== undefined && { maxLogLines: attack.maxLogLines }),
      logBytes: logAfter.bytes - logBefore.bytes,
      attackSeconds,
      attackerEnded,
      notes,
      memory: { idle: idleMemory, ...(afterMemory && { after: afterMemory }) },
      ...(profileS > 0 ? { profiles: await profiles } : {}),
      phases: { attackStartedAt, attackerEndedAt },
      refusals,
    };
  } finally {
    if (pushSummary === undefined) await pushes.stop(0).catch(() => {});
    await ready.stop();
    await rss.stop();
    await program.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

/** The debug interface's profile of one request is cut short past about a minute: take windows of this. */
const PROFILE_WINDOW_S = 40;

/** CPU profiles of `seconds` in windows of at most {@link PROFILE_WINDOW_S}, saved as `<prefix>-<n>.cpuprofile`. */
async function takeProfiles(
  httpAddr: string,
  seconds: number,
  prefix: string,
  log: (message: string) => void,
): Promise<string[]> {
  const files: string[] = [];
  for (let left = seconds, n = 0; left > 0; left -= PROFILE_WINDOW_S, n++) {
    const window = Math.min(left, PROFILE_WINDOW_S);
    const file = `${prefix}-${n}.cpuprofile`;
    try {
      const response = await fetch(`http://${httpAddr}/debug/pprof/profile?seconds=${window}`);
      await Deno.writeTextFile(file, await response.text());
      files.push(file);
    } catch (error) {
      log(`profile ${file} failed: ${error instanceof Error ? error.message : error}`);
      break;
    }
  }
  return files;
}

/** The `http_server_refused` lines of the server's metrics, or the reason they could not be read. */
async function refusalSamples(monitoringAddr: string): Promise<string[]> {
  try {
    const text = await (await fetch(`http://${monitoringAddr}/metrics`)).text();
    return text.split("\n").filter((line) => line.startsWith("http_server_refused"));
  } catch (error) {
    return [`metrics unreadable: ${error instanceof Error ? error.message : error}`];
  }
}

function logSize(text: string): { lines: number; bytes: number } {
  let lines = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lines++;
  return { lines, bytes: text.length };
}
