/**
 * Node churn against a running `mesh-discovery` (the `bench:orch` node-churn row): Node updates that change
 * no label the mesh reads arrive at a steady rate. The server's CPU per update is its CPU over the churn minus
 * its CPU over an equally long quiet stretch, divided by the updates; then, while the same churn arrives again,
 * a probe asks `/ready` back to back, and its round trips show how long the event loop was held (a request
 * that arrives while the loop runs a handler waits for it).
 *
 * @module
 */
import { type LatencySummary, summarize } from "./latency_stats.ts";
import { processCpuMs } from "./bench_processes.ts";

/** What one churn measurement needs. */
export interface NodeChurnOptions {
  /** The server's process id (its CPU is read from /proc). */
  readonly pid: number;
  /** An address whose `/ready` answers without work (`--httpAddr`). */
  readonly httpAddr: string;
  /** Applies the `n`th update (a Node whose annotation says `n`). */
  readonly update: (n: number) => void;
  /** Updates in total. */
  readonly updates: number;
  /** Updates a second. */
  readonly perSecond: number;
}

/** Figures of one churn measurement. */
export interface NodeChurnResult {
  readonly updates: number;
  readonly perSecond: number;
  /** Server CPU per update beyond the quiet stretch's, ms (CPU ticks are 10 ms: read it over many updates). */
  readonly serverCpuMsPerUpdate: number;
  /** Server CPU over the quiet stretch and over the churn (no probes in either), ms. */
  readonly quietCpuMs: number;
  readonly churnCpuMs: number;
  /** `/ready` round trips, ms, during the quiet stretch and during the churn. */
  readonly quietProbeMs: LatencySummary;
  readonly churnProbeMs: LatencySummary;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Asks `/ready` back to back until `done` resolves; returns each round trip in ms. */
async function probe(httpAddr: string, done: Promise<void>): Promise<number[]> {
  const samples: number[] = [];
  let finished = false;
  done.then(() => finished = true);
  while (!finished) {
    const started = performance.now();
    const response = await fetch(`http://${httpAddr}/ready`);
    await response.body?.cancel();
    samples.push(performance.now() - started);
    await sleep(2);
  }
  return samples;
}

/** Applies `updates` at `perSecond`, returning once the stretch they span (and one more interval) has passed. */
async function churn(options: NodeChurnOptions, first: number): Promise<void> {
  const started = performance.now();
  for (let n = 0; n < options.updates; n++) {
    const wait = started + (n * 1000) / options.perSecond - performance.now();
    if (wait > 0) await sleep(wait);
    options.update(first + n);
  }
  // The last update's handling falls inside the measured stretch.
  await sleep(1000 / options.perSecond);
}

/** The server's CPU over `stretch`, ms. */
async function cpuOver(pid: number, stretch: Promise<unknown>): Promise<number> {
  const before = processCpuMs(pid);
  await stretch;
  return processCpuMs(pid) - before;
}

/**
 * Measures CPU first, without probes (whose own cost would blur it): a quiet stretch, then the churn, each
 * `updates / perSecond` seconds long. Then the probe's round trips over a quiet stretch and over the churn.
 */
export async function nodeChurn(options: NodeChurnOptions): Promise<NodeChurnResult> {
  const durationMs = (options.updates / options.perSecond) * 1000;
  const quietCpuMs = await cpuOver(options.pid, sleep(durationMs));
  const churnCpuMs = await cpuOver(options.pid, churn(options, 0));
  const quietProbeMs = await probe(options.httpAddr, sleep(durationMs));
  const churnProbeMs = await probe(options.httpAddr, churn(options, options.updates));
  const round = (v: number) => Math.round(v * 10) / 10;
  return {
    updates: options.updates,
    perSecond: options.perSecond,
    serverCpuMsPerUpdate: round(Math.max(0, churnCpuMs - quietCpuMs) / options.updates),
    quietCpuMs,
    churnCpuMs,
    quietProbeMs: summarize(quietProbeMs),
    churnProbeMs: summarize(churnProbeMs),
  };
}
