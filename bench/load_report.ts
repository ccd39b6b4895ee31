/**
 * The figures of one load-benchmark run and their Markdown rendering, with the targets of issue #5.
 *
 * @module
 */
import type { MemoryPeaks } from "./memory_sampler.ts";
import type { AwaitReply, ConnectReply } from "./agent_protocol.ts";
import type { MachineInfo, ProcessMemory, ThreadCpu } from "./bench_processes.ts";
import { type LatencySummary, summarize } from "./latency_stats.ts";

/** CPU time used during a phase, in ms (one clock tick resolution), including its settle time. */
export interface CpuUse {
  readonly serverMs: number;
  readonly loadMs: number;
  /** The server's CPU by thread (main, V8 workers, other); absent for the replay server. */
  readonly serverThreads?: ThreadCpu;
}

/** One edit on disk and what the proxies saw. */
export interface RoundResult extends AwaitReply {
  /** Proxy 0's resource showed the edit (state of the world only). */
  readonly verified?: boolean;
  readonly cpu: CpuUse;
}

/** Everything one run measured. */
export interface LoadReport {
  readonly date: string;
  readonly machine: MachineInfo & { readonly loadAverageAfter: string };
  readonly config: {
    readonly proxies: number;
    readonly services: number;
    readonly rounds: number;
    readonly protocol: "sotw" | "delta";
    readonly listeners: string;
    readonly server: string;
    readonly env: Readonly<Record<string, string>>;
  };
  readonly startupMs: number;
  readonly initial: ConnectReply;
  /** CPU per phase: initial, debugPush, idle (10 s, nothing changing), reconnect. */
  readonly cpu: Readonly<Record<string, CpuUse>>;
  readonly afterConnect: ProcessMemory;
  /** Absent for delta runs. */
  readonly debugPush?: AwaitReply;
  /** Bytes of each captured response (one proxy's full configuration). */
  readonly capturedSizes: Readonly<Record<string, number>>;
  /** Per edit kind, one result per round. */
  readonly changes: Readonly<Record<string, readonly RoundResult[]>>;
  readonly serverMemory: ProcessMemory;
  /** Peaks of the server's own memory figures, sampled through ControlZ while proxies were connected. */
  readonly memoryPeaks?: MemoryPeaks;
  /**
   * Full collections the server ran after a burst (`DISCOVERY_COLLECT_AFTER_BURST_BYTES`) during the run; one
   * that fell inside a phase is in that phase's CPU.
   */
  readonly heapCollections?: number;
  readonly reconnect?: ConnectReply;
  readonly baseline?: {
    readonly initial: ConnectReply;
    readonly push: AwaitReply;
    readonly serverWriteMs: number;
    readonly cpu: { readonly initial: CpuUse; readonly push: CpuUse };
    /** Peak RSS of the replay server: the transport's own memory for the same bytes. */
    readonly peakRssKiB?: number;
    /** One small captured push response of a type written once to every stream: the floor per message. */
    readonly floors?: readonly ReplayFloor[];
    /** How the proxies served by the own HTTP/2 server (the floors "on own HTTP/2") connected. */
    readonly ownH2?: OwnH2Connect;
  };
}

/** Fresh proxies' first configuration from the replay server on the benchmark's own HTTP/2 server. */
export interface OwnH2Connect {
  readonly initial: ConnectReply;
  readonly cpu: CpuUse;
  /** Every captured response written once more to every stream, before the floors. */
  readonly push: AwaitReply;
  readonly pushCpu: CpuUse;
  /** Peak RSS of that replay server. */
  readonly peakRssKiB: number;
}

/** A small captured push response written once to every stream by the replay server. */
export interface ReplayFloor {
  /** Short type name (EDS, RDS). */
  readonly type: string;
  /** Bytes of the response. */
  readonly bytes: number;
  /** Streams written to. */
  readonly messages: number;
  /** Per proxy, ms from the write's start to its arrival. */
  readonly latencies: readonly number[];
  /** Wall time of the replay server's write loop. */
  readonly serverWriteMs: number;
  /** CPU of the replay server and the load process meanwhile. */
  readonly cpu: CpuUse;
  /** Proxies that did not receive it. */
  readonly missing?: number;
  /** Proxies whose stream had ended, by status. */
  readonly ended?: Readonly<Record<string, number>>;
}

const ms = (v: number) =>
  Number.isNaN(v) ? "–" : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`;
const mib = (bytes: number) =>
  bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(0)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

function row(label: string, s: LatencySummary, extra = ""): string {
  return `| ${label} | ${s.count} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.max)} | ${extra} |`;
}

function cpuNote(cpu: CpuUse | undefined): string {
  if (cpu === undefined) return "";
  const t = cpu.serverThreads;
  const split = t === undefined
    ? ""
    : ` (main thread ${ms(t.mainMs)}, V8 workers ${ms(t.v8WorkersMs)}, other ${ms(t.otherMs)})`;
  return `; CPU server ${ms(cpu.serverMs)}${split}, load ${ms(cpu.loadMs)}`;
}

function verdict(ok: boolean): string {
  return ok ? "met" : "**not met**";
}

/** Renders a report as Markdown: the machine, the settings, a latency table and the targets. */
export function renderReport(r: LoadReport): string {
  const lines: string[] = [];
  const c = r.config;
  lines.push(`### ${c.proxies} proxies, ${c.services} services, ${c.protocol}, listeners: ${c.listeners}`);
  lines.push("");
  lines.push(
    `${r.date.slice(0, 16)}Z · ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memory} · Deno ` +
      `${r.machine.deno} · load average before ${r.machine.loadAverage}, after ${r.machine.loadAverageAfter} · ` +
      `server: ${c.server}${Object.keys(c.env).length ? ` (${JSON.stringify(c.env)})` : ""}`,
  );
  lines.push("");
  const full = Object.values(r.capturedSizes).reduce((s, v) => s + v, 0);
  if (full > 0) {
    lines.push(
      `One proxy's full configuration: ${mib(full)} (${
        Object.entries(r.capturedSizes).map(([t, b]) => `${t} ${mib(b)}`).join(", ")
      }). Server startup (to /ready): ${ms(r.startupMs)}.`,
    );
    lines.push("");
  }
  lines.push("| what | proxies | p50 | p99 | slowest | notes |");
  lines.push("| --- | ---: | ---: | ---: | ---: | --- |");
  const initial = summarize(r.initial.latencies);
  lines.push(row(
    "first full config (all connect at once)",
    initial,
    `${r.initial.incomplete} incomplete; ${r.initial.retries} retried connects${
      r.initial.retries > 0 ? ` (${JSON.stringify(r.initial.retryReasons ?? {})})` : ""
    }; ${mib(r.initial.bytes)} received` +
      cpuNote(r.cpu.initial),
  ));
  const debug = r.debugPush === undefined ? undefined : summarize(r.debugPush.latencies);
  if (r.debugPush !== undefined && debug !== undefined) {
    lines.push(row(
      "full push, `/debug/adsz?push=true` (cache warm)",
      debug,
      `${r.debugPush.missing} missing; ${mib(r.debugPush.bytes)}; first byte after ${
        ms(r.debugPush.firstMs)
      }` +
        cpuNote(r.cpu.debugPush),
    ));
  }
  const aggregated: Record<string, LatencySummary> = {};
  for (const [label, rounds] of Object.entries(r.changes)) {
    const all = rounds.flatMap((x) => x.latencies);
    aggregated[label] = summarize(all);
    const missing = rounds.reduce((s, x) => s + x.missing, 0);
    const arrivals = rounds.map((x) => Object.entries(x.arrivals).map(([t, n]) => `${t} ${n}`).join("+"))
      .join("; ");
    const verified = rounds.every((x) => x.verified !== false);
    lines.push(row(
      `${label}, ${rounds.length} rounds from the write`,
      aggregated[label],
      `${missing} missing; sent per round: ${arrivals}; first byte ${
        rounds.map((x) => ms(x.firstMs)).join("/")
      }; proxy 0 content ${
        rounds[0]?.verified === undefined ? "not checked" : verified ? "checked" : "WRONG"
      }` +
        cpuNote(rounds[0]?.cpu),
    ));
  }
  if (r.reconnect) {
    lines.push(row(
      "reconnect storm (all close and reopen at once)",
      summarize(r.reconnect.latencies),
      `${r.reconnect.incomplete} incomplete; ended ${JSON.stringify(r.reconnect.ended)}${
        cpuNote(r.cpu.reconnect)
      }`,
    ));
  }
  if (r.baseline) {
    lines.push(row(
      "baseline replay: first full config",
      summarize(r.baseline.initial.latencies),
      cpuNote(r.baseline.cpu.initial).slice(2),
    ));
    lines.push(row(
      "baseline replay: push of the same bytes",
      summarize(r.baseline.push.latencies),
      `server write loop ${ms(r.baseline.serverWriteMs)}${cpuNote(r.baseline.cpu.push)}` +
        (r.baseline.peakRssKiB === undefined
          ? ""
          : `; replay server peak RSS ${mibOf(r.baseline.peakRssKiB * 1024)} MiB`),
    ));
  }
  for (const floor of r.baseline?.floors ?? []) {
    lines.push(row(
      `replay floor: one ${floor.type} push response (${floor.bytes} B) per stream`,
      summarize(floor.latencies),
      `${floor.messages} messages, server write loop ${ms(floor.serverWriteMs)}${cpuNote(floor.cpu)}; ` +
        `server CPU per message ${(1000 * floor.cpu.serverMs / Math.max(1, floor.messages)).toFixed(0)} µs` +
        (floor.missing === undefined
          ? ""
          : `; missing ${floor.missing}, ended ${JSON.stringify(floor.ended ?? {})}`),
    ));
  }
  const own = r.baseline?.ownH2;
  if (own !== undefined) {
    lines.push(row(
      "own HTTP/2 replay: first configuration of fresh proxies",
      summarize(own.initial.latencies),
      `incomplete ${own.initial.incomplete}, ended ${JSON.stringify(own.initial.ended)}${
        cpuNote(own.cpu)
      }; ` +
        `replay server peak RSS ${mibOf(own.peakRssKiB * 1024)} MiB`,
    ));
    lines.push(row(
      "own HTTP/2 replay: push of the same bytes",
      summarize(own.push.latencies),
      `missing ${own.push.missing}, ended ${JSON.stringify(own.push.ended)}${cpuNote(own.pushCpu)}`,
    ));
  }
  lines.push("");
  if (r.cpu.idle !== undefined) {
    lines.push(
      `In 10 s with every proxy connected and nothing changing: ${cpuNote(r.cpu.idle).slice(2)}.`,
    );
    lines.push("");
  }
  lines.push(
    `Server memory: peak RSS ${(r.serverMemory.peakRssKiB / 1024).toFixed(0)} MiB (after connect ` +
      `${(r.afterConnect.rssKiB / 1024).toFixed(0)} MiB, at end ${
        (r.serverMemory.rssKiB / 1024).toFixed(0)
      } MiB).` +
      (r.memoryPeaks === undefined || r.memoryPeaks.samples === 0
        ? ""
        : ` Sampled peaks (${r.memoryPeaks.samples} samples): V8 heap ${
          mibOf(r.memoryPeaks.heapUsed)
        } used of ${mibOf(r.memoryPeaks.heapTotal)}, ` +
          `external (Buffers) ${mibOf(r.memoryPeaks.external)}, RSS ${mibOf(r.memoryPeaks.rss)} MiB.`) +
      (r.heapCollections === undefined ? "" : ` Full collections after a burst: ${r.heapCollections}.`),
  );
  if (r.baseline && c.protocol === "delta") {
    // Delta pushes send only what changed: only the first configuration compares with the replay.
    lines.push(
      `First full config ÷ replay of the same bytes (slowest proxy): ${
        (summarize(r.initial.latencies).max / summarize(r.baseline.initial.latencies).max).toFixed(2)
      }×.`,
    );
  } else if (r.baseline) {
    const basePush = summarize(r.baseline.push.latencies).max;
    const fullLabel = Object.keys(aggregated).find((l) => l.includes("(full push)"));
    // Only a config change that sent every type sent the replay's bytes; pushes send what changed.
    const everyType = ["CDS", "EDS", "LDS", "RDS"];
    const sameBytes = fullLabel === undefined
      ? []
      : r.changes[fullLabel].filter((x) => everyType.every((t) => (x.arrivals[t] ?? 0) > 0));
    const configPush = Math.max(...sameBytes.map((x) => Math.max(...x.latencies) - x.firstMs));
    lines.push(
      `Full push ÷ replay of the same bytes (slowest proxy): debug push ${
        ((debug?.max ?? NaN) / basePush).toFixed(2)
      }×; ` +
        (sameBytes.length === 0
          ? "config-change pushes sent only the types that changed, not the replay's bytes."
          : `config-change push, from its first byte, ${(configPush / basePush).toFixed(2)}×.`),
    );
  }
  lines.push("");
  if (c.proxies === 1000) {
    const fullP99 = Math.max(
      ...Object.entries(aggregated).filter(([l]) => l.includes("(full push)")).map(([, s]) => s.p99),
    );
    const endpointP99 = Object.entries(aggregated).find(([l]) => l.includes("endpoint-only"))?.[1].p99 ?? NaN;
    lines.push(
      `Targets at N=1000: full-push convergence p99 ${ms(fullP99)} ≤ 1 s ${verdict(fullP99 <= 1000)}; ` +
        `endpoint-only p99 ${ms(endpointP99)} ≤ 200 ms ${verdict(endpointP99 <= 200)}; ` +
        `peak RSS ${(r.serverMemory.peakRssKiB / 1024).toFixed(0)} MiB ≤ 1 GB ${
          verdict(r.serverMemory.peakRssKiB * 1024 <= 1e9)
        }.`,
    );
  }
  if (r.reconnect && c.proxies >= 5000) {
    const slowest = summarize(r.reconnect.latencies).max;
    const ok = r.reconnect.incomplete === 0 && slowest <= 10_000;
    lines.push(`Target: ${c.proxies} proxies reconnecting, slowest ${ms(slowest)} ≤ 10 s ${verdict(ok)}.`);
  }
  return lines.join("\n");
}

function mibOf(bytes: number): string {
  return (bytes / 1048576).toFixed(0);
}
