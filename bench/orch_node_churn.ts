/**
 * Node churn against a running `mesh-discovery` (the `bench:orch` node-churn rows): Node updates (ones that
 * change no label the mesh reads, or zone changes) arrive at a steady rate. The server's CPU per update is its CPU over the churn minus
 * its CPU over an equally long quiet stretch, divided by the updates; then, while the same churn arrives again,
 * a probe asks `/ready` back to back, and its round trips show how long the event loop was held (a request
 * that arrives while the loop runs a handler waits for it).
 *
 * @module
 */
import { type LatencySummary, summarize } from "./latency_stats.ts";
import { processCpuMs } from "./bench_processes.ts";

/** What one churn measurement needs (the updates may also change what the mesh reads: zone changes). */
export interface NodeChurnOptions {
  /** The server's process id (its CPU is read from /proc). */
  readonly pid: number;
  /** An address whose `/ready` answers without work (`--httpAddr`). */
  readonly httpAddr: string;
  /** Applies the `n`th update of a stretch. */
  readonly update: (n: number) => void;
  /** Updates in total. */
  readonly updates: number;
  /** Updates a second. */
  readonly perSecond: number;
  /** How many Node updates the server has handled so far (from its metrics). */
  readonly handled: () => Promise<number>;
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

/**
 * Applies `updates` at `perSecond`; returns once the server has handled every one of them (a server short of
 * CPU handles them late, and their cost must not spill into the next stretch) and one more interval passed.
 */
async function churn(options: NodeChurnOptions): Promise<void> {
  const target = await options.handled() + options.updates;
  const started = performance.now();
  for (let n = 0; n < options.updates; n++) {
    const wait = started + (n * 1000) / options.perSecond - performance.now();
    if (wait > 0) await sleep(wait);
    options.update(n);
  }
  await sleep(1000 / options.perSecond);
  const deadline = performance.now() + 300_000;
  while (await options.handled() < target) {
    if (performance.now() > deadline) {
      throw new Error(`The server did not handle ${options.updates} Node updates`);
    }
    await sleep(100);
  }
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
  const churnCpuMs = await cpuOver(options.pid, churn(options));
  const quietProbeMs = await probe(options.httpAddr, sleep(durationMs));
  const churnProbeMs = await probe(options.httpAddr, churn(options));
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
