/**
 * Reads a server's counters from its `/metrics` page, for benchmarks that report what the server counted.
 *
 * @module
 */

/** The sum of every sample of `pattern` (a global, multiline pattern whose first group is the value). */
export async function metricSum(monitoringAddr: string, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`http://${monitoringAddr}/metrics`)).text();
  let sum = 0;
  for (const m of text.matchAll(pattern)) sum += Number(m[1]);
  return sum;
}

/** Collections after a burst (`DISCOVERY_COLLECT_AFTER_BURST_BYTES`). */
export const HEAP_COLLECTIONS = /^discovery_heap_collections (\d+)/gm;
