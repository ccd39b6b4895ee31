/**
 * Prints where a V8 sampling `.heapprofile` (from `/debug/pprof/allocs`) allocated: the functions with the
 * most self bytes and the most inclusive bytes, and each divided by `--per` (proxies, say).
 *
 *   deno run --allow-read bench/heapprofile_top.ts FILE.heapprofile [--top 30] [--per 5000] [--filter TEXT]
 *
 * @module
 */
import { parseArgs } from "node:util";

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children?: HeapNode[];
}

/** A V8 sampling heap profile as the inspector returns it. */
export interface HeapProfile {
  head: HeapNode;
}

/** Bytes per function (`name url:line`): self and inclusive (recursion counted once), and the total. */
export function heapTotals(
  profile: HeapProfile,
): { self: Map<string, number>; inclusive: Map<string, number>; total: number } {
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const keyOf = (n: HeapNode) => {
    const file = n.callFrame.url.replace(/^.*\/(work\/[^/]+\/[^/]+|work\/main|node_modules)\//, "");
    return `${n.callFrame.functionName || "(anonymous)"} ${file}:${n.callFrame.lineNumber + 1}`;
  };
  const walk = (node: HeapNode, onPath: Set<string>): number => {
    const key = keyOf(node);
    self.set(key, (self.get(key) ?? 0) + node.selfSize);
    let total = node.selfSize;
    const fresh = !onPath.has(key);
    if (fresh) onPath.add(key);
    for (const child of node.children ?? []) total += walk(child, onPath);
    if (fresh) {
      onPath.delete(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + total);
    }
    return total;
  };
  const total = walk(profile.head, new Set());
  return { self, inclusive, total };
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: {
      top: { type: "string", default: "30" },
      per: { type: "string", default: "1" },
      filter: { type: "string", default: "" },
    },
  });
  const top = Number(values.top);
  const per = Number(values.per);
  const profile = JSON.parse(await Deno.readTextFile(positionals[0])) as HeapProfile;
  const { self, inclusive, total } = heapTotals(profile);
  const fmt = (bytes: number) =>
    `${(bytes / 2 ** 20).toFixed(2).padStart(8)} MiB ${(bytes / per).toFixed(0).padStart(7)} B/each`;
  console.log(`total ${fmt(total)}`);
  for (const [title, table] of [["self", self], ["inclusive", inclusive]] as const) {
    console.log(`\n${title}:`);
    [...table].filter(([k]) => k.includes(values.filter)).sort((a, b) => b[1] - a[1]).slice(0, top)
      .forEach(([k, v]) => console.log(`${fmt(v)}  ${k}`));
  }
}
