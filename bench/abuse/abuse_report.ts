/**
 * The abuse benchmark's Markdown table: one row per attack, its figures and whether each target of #35 holds.
 *
 * @module
 */
import type { AttackResult } from "./run_attack.ts";
import { describeChange } from "./memory_breakdown.ts";

/** The targets of #35. */
export const TARGETS = {
  /** RSS `afterS` after the attackers left, relative to idle. */
  rssReturnRatio: 1.1,
  /** The slowest `/ready` answer. */
  readyMaxMs: 1_000,
} as const;

/** Which targets an attack missed; empty when it met them all. */
export function missedTargets(r: AttackResult): string[] {
  const missed: string[] = [];
  if (!r.alive) missed.push("server died");
  if (r.afterMiB === undefined || r.afterMiB > r.idleMiB * TARGETS.rssReturnRatio) {
    missed.push("RSS not back");
  }
  if (r.pushes === undefined || r.pushes.received < r.pushes.expected) missed.push("pushes missed");
  if (r.ready.failures > 0 || !(r.ready.latency.max <= TARGETS.readyMaxMs)) {
    missed.push("/ready slow or failed");
  }
  if (r.maxLogLines !== undefined && r.logLines > r.maxLogLines) missed.push("log not bounded");
  return missed;
}

/** Each failed `/ready` probe, its time from the attack's start and its error. */
function describeFailures(r: AttackResult): string {
  if (!r.ready.failed?.length) return "";
  const start = r.phases?.attackStartedAt;
  const at = (ms: number) =>
    start === undefined ? new Date(ms).toISOString() : `${((ms - start) / 1000).toFixed(1)} s`;
  const end = r.phases && start !== undefined
    ? ` (attacker ended at ${((r.phases.attackerEndedAt - start) / 1000).toFixed(1)} s)`
    : "";
  return `; failed /ready probes${end}: ` +
    r.ready.failed.map((f) => `at ${at(f.atMs)} after ${f.tookMs} ms: ${f.error}`).join("; ");
}

const ms = (v: number) => Number.isNaN(v) ? "–" : String(Math.round(v));

/** Renders the results as a Markdown table, with each attacker's report below it. */
export function renderAbuseReport(results: readonly AttackResult[]): string {
  const head = [
    "| attack | RSS idle / peak / after (MiB) | /ready p50 / p99 / max (ms) | /ready failures | longest /ready gap (ms) " +
    "| pushes received / expected | server alive | log lines (bytes) during attack | targets |",
    "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |",
  ];
  const rows = results.map((r) => {
    const missed = missedTargets(r);
    const after = r.afterMiB === undefined ? "–" : String(r.afterMiB);
    const pushes = r.pushes === undefined
      ? "–"
      : `${r.pushes.received} / ${r.pushes.expected}${
        r.pushes.ended ? ` (stream ended: ${r.pushes.ended})` : ""
      }`;
    return `| ${r.name} | ${r.idleMiB} / ${r.peakMiB} / ${after} (${r.afterS} s) | ${
      ms(r.ready.latency.p50)
    } / ${ms(r.ready.latency.p99)} / ${
      ms(r.ready.latency.max)
    } | ${r.ready.failures} | ${r.ready.maxGapMs} | ${pushes} | ${
      r.alive ? "yes" : `no (${r.death})`
    } | ${r.logLines} (${r.logBytes}) | ${missed.length === 0 ? "met" : missed.join(", ")} |`;
  });
  const notes = results.map((r) =>
    `- **${r.name}** ${JSON.stringify(r.sizes)}: attacker ${r.attackerEnded} after ${r.attackSeconds} s; ` +
    `push latency p50 ${r.pushes?.latencyP50Ms ?? "–"} ms, max ${r.pushes?.latencyMaxMs ?? "–"} ms; ` +
    `attacker saw ${JSON.stringify(r.notes)}` +
    (r.afterByRoundMiB ? `; RSS after each round ${r.afterByRoundMiB.join(", ")} MiB` : "") +
    (r.memory?.after ? `; memory idle → after: ${describeChange(r.memory.idle, r.memory.after)}` : "") +
    (r.profiles?.length ? `; CPU profiles ${r.profiles.join(", ")}` : "") +
    (r.refusals?.length ? `; refusals ${r.refusals.join(", ")}` : "") +
    describeFailures(r)
  );
  return [...head, ...rows, "", ...notes].join("\n");
}
