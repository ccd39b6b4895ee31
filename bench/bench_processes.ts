/**
 * The subprocesses of the load benchmark besides the server: the load agent and the baseline replay server,
 * each a `deno run` with least privilege, spoken to in JSON lines; and the memory figures of a process.
 *
 * @module
 */
import { LineChannel } from "./agent_protocol.ts";

const BENCH_DIR = new URL(".", import.meta.url).pathname;

/** Permissions of the load agent and the baseline server: loopback only, the schema files, grpc-js's env. */
const CHILD_PERMISSIONS = ["--allow-net=127.0.0.1", "--allow-read", "--allow-env"];

/** Options of a child `deno run`. */
export interface ChildOptions {
  /** Extra V8 flags, e.g. `--max-old-space-size=8192`. */
  readonly v8Flags?: readonly string[];
  /** Permissions beyond the common ones, e.g. `--allow-write=DIR`. */
  readonly permissions?: readonly string[];
  /** Called with each non-JSON output line. */
  readonly onLine?: (line: string) => void;
}

/** Starts `bench/<script>` with `args`; its stderr goes to ours. */
export function startChild(script: string, args: readonly string[], options: ChildOptions = {}): LineChannel {
  const v8 = options.v8Flags?.length ? [`--v8-flags=${options.v8Flags.join(",")}`] : [];
  const child = new Deno.Command("deno", {
    args: [
      "run",
      ...CHILD_PERMISSIONS,
      ...(options.permissions ?? []),
      ...v8,
      `${BENCH_DIR}${script}`,
      ...args,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  return new LineChannel(child, options.onLine ?? ((line) => console.error(`[${script}] ${line}`)));
}

/** Memory of a running process in KiB, from /proc (Linux). */
export interface ProcessMemory {
  /** Peak resident set size (VmHWM). */
  readonly peakRssKiB: number;
  /** Current resident set size (VmRSS). */
  readonly rssKiB: number;
  /** Its anonymous part (RssAnon): heaps, stacks, buffers. */
  readonly rssAnonKiB: number;
  /** Its file-backed part (RssFile): the runtime binary's pages that were touched. */
  readonly rssFileKiB: number;
}

/**
 * Reads a file under /proc through `cat`: Deno refuses /proc reads to anything short of `--allow-all`, while
 * `--allow-run=cat` is narrow. Empty when the file is gone.
 */
export function readProc(path: string): string {
  const output = new Deno.Command("cat", { args: [path], stdout: "piped", stderr: "null" }).outputSync();
  return output.success ? new TextDecoder().decode(output.stdout) : "";
}

/** Reads VmHWM and VmRSS of `pid`; zeros when the process is gone. */
export function processMemory(pid: number): ProcessMemory {
  const status = readProc(`/proc/${pid}/status`);
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
  return {
    peakRssKiB: field("VmHWM"),
    rssKiB: field("VmRSS"),
    rssAnonKiB: field("RssAnon"),
    rssFileKiB: field("RssFile"),
  };
}

/** CPU time (user + system) a process has used, in ms; 0 when it is gone. Resolution: one clock tick. */
export function processCpuMs(pid: number): number {
  const stat = readProc(`/proc/${pid}/stat`);
  // Fields after the parenthesized command name; utime and stime are fields 14 and 15 (1-based).
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(rest[11] ?? 0) + Number(rest[12] ?? 0);
  return ticks * 10; // USER_HZ is 100 on Linux.
}

/** A process's CPU time split by thread, in ms: its main thread, V8's worker threads, and the rest. */
export interface ThreadCpu {
  /** The thread whose id is the process's: the event loop, scavenges and the collector's pauses. */
  readonly mainMs: number;
  /** Threads named `V8 DefaultWorke…`: concurrent marking and sweeping, parallel scavenges, compilation. */
  readonly v8WorkersMs: number;
  /** Every other thread (the runtime's I/O threads). */
  readonly otherMs: number;
}

/** CPU time of each of `pid`'s threads, grouped as {@link ThreadCpu}; zeros when the process is gone. */
export function threadCpuMs(pid: number): ThreadCpu {
  // One `sh` reads every thread's name and stat: a `cat` per thread would cost the server's cores more.
  const output = new Deno.Command("sh", {
    args: ["-c", `for t in /proc/${pid}/task/*; do echo "\${t##*/} $(cat $t/comm) :: $(cat $t/stat)"; done`],
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  let mainMs = 0, v8WorkersMs = 0, otherMs = 0;
  for (const line of new TextDecoder().decode(output.stdout).split("\n")) {
    const match = /^(\d+) (.*) :: (.*)$/.exec(line);
    if (match === null) continue;
    const stat = match[3];
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ms = (Number(rest[11] ?? 0) + Number(rest[12] ?? 0)) * 10;
    if (Number(match[1]) === pid) mainMs += ms;
    else if (match[2].startsWith("V8 ")) v8WorkersMs += ms;
    else otherMs += ms;
  }
  return { mainMs, v8WorkersMs, otherMs };
}

/** The machine the figures were measured on. */
export interface MachineInfo {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memory: string;
  readonly deno: string;
  readonly loadAverage: string;
}

/** Describes this machine from /proc. */
export function machineInfo(): MachineInfo {
  const cpuinfo = readProc("/proc/cpuinfo");
  const meminfo = readProc("/proc/meminfo");
  const totalKiB = Number(/^MemTotal:\s+(\d+)/m.exec(meminfo)?.[1] ?? 0);
  return {
    cpus: (cpuinfo.match(/^processor\s*:/gm) ?? []).length,
    cpuModel: /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? "unknown",
    memory: `${(totalKiB / 1024 / 1024).toFixed(1)} GiB`,
    deno: Deno.version.deno,
    loadAverage: loadAverage(),
  };
}

/** The 1, 5 and 15 minute load averages. */
export function loadAverage(): string {
  return readProc("/proc/loadavg").split(" ").slice(0, 3).join(" ");
}
