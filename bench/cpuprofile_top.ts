/**
 * Prints where a V8 `.cpuprofile` (from `/debug/pprof/profile`) spent its time: the functions with the most
 * self time and the most inclusive time.
 *
 *   deno run --allow-read bench/cpuprofile_top.ts FILE.cpuprofile [--top 25] [--filter TEXT]
 *
 * @module
 */
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** A V8 CPU profile as the inspector returns it. */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Milliseconds per function (`name url:line`): self time and inclusive time, and the profile's total. */
export function profileTotals(
  profile: CpuProfile,
): { self: Map<string, number>; inclusive: Map<string, number>; totalMs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfById = new Map<number, number>();
  profile.samples.forEach((id, i) =>
    selfById.set(id, (selfById.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000)
  );
  const keyOf = (n: ProfileNode) => {
    const file = n.callFrame.url.replace(/^.*\/(work\/main|node_modules)\//, "$1/");
    return `${n.callFrame.functionName || "(anonymous)"} ${file}:${n.callFrame.lineNumber + 1}`;
  };
  const self = new Map<string, number>();
  for (const [id, ms] of selfById) {
    const key = keyOf(byId.get(id)!);
    self.set(key, (self.get(key) ?? 0) + ms);
  }
  // Inclusive time: each node's subtree, counted once per function along a path (recursion not doubled).
  const inclusive = new Map<string, number>();
  const walk = (id: number, onPath: Set<string>): number => {
    const node = byId.get(id)!;
    let total = selfById.get(id) ?? 0;
    const key = keyOf(node);
    const fresh = !onPath.has(key);
    if (fresh) onPath.add(key);
    for (const child of node.children ?? []) total += walk(child, onPath);
    if (fresh) {
      onPath.delete(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + total);
    }
    return total;
  };
  const root = profile.nodes[0];
  const totalMs = walk(root.id, new Set());
  return { self, inclusive, totalMs };
}

/**
 * The longest stretch of consecutive samples that are neither idle nor "(program)", from `fromMs` into the
 * profile on: an upper bound on the longest the event loop was held (turns with nothing idle between them
 * count as one stretch). Starting the profiler is such a stretch itself; `fromMs` leaves it out.
 */
export function longestBusyMs(profile: CpuProfile, fromMs = 0): number {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  let longest = 0;
  let current = 0;
  let at = 0;
  profile.samples.forEach((id, i) => {
    const delta = (profile.timeDeltas[i] ?? 0) / 1000;
    at += delta;
    const name = byId.get(id)?.callFrame.functionName;
    if (at < fromMs || name === "(idle)" || name === "(program)") current = 0;
    else longest = Math.max(longest, current += delta);
  });
  return longest;
}

/**
 * The longest interval between two consecutive samples, from `fromMs` into the profile on. The profiler samples
 * about every millisecond; an interval of tens of milliseconds means the process got no CPU then (the machine
 * was busy with other processes), and the sample after it is charged with the whole interval.
 */
export function longestSampleGapMs(profile: CpuProfile, fromMs = 0): number {
  let longest = 0;
  let at = 0;
  for (const delta of profile.timeDeltas) {
    at += delta / 1000;
    if (at >= fromMs) longest = Math.max(longest, delta / 1000);
  }
  return longest;
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: { top: { type: "string", default: "25" }, filter: { type: "string", default: "" } },
  });
  if (positionals.length !== 1) throw new TypeError("Expected one argument: the .cpuprofile file");
  const { self, inclusive, totalMs } = profileTotals(JSON.parse(await Deno.readTextFile(positionals[0])));
  const top = Number(values.top);
  const show = (title: string, map: Map<string, number>) => {
    console.log(`\n${title} (of ${totalMs.toFixed(0)} ms sampled)`);
    [...map].filter(([k]) => k.includes(values.filter)).sort((a, b) => b[1] - a[1]).slice(0, top)
      .forEach(([k, ms]) =>
        console.log(`${ms.toFixed(0).padStart(8)} ms ${(100 * ms / totalMs).toFixed(1).padStart(5)}%  ${k}`)
      );
  };
  show("self time", self);
  show("inclusive time", inclusive);
}
