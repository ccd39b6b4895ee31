/**
 * The process's own figures as Prometheus's process collector names them: CPU time, resident memory and start
 * time, read when scraped. Memory a runtime never frees (docs/deno_pin.md) shows here first. Open and allowed
 * file descriptors and virtual memory are left out: Deno lets a program read `/proc/self` only with every
 * permission.
 *
 * @module
 */
import process from "node:process";
import type { Metrics } from "./metrics.ts";

/** One reading of the process's figures. */
export interface ProcessFigures {
  /** User and system CPU time of every thread, in seconds. */
  readonly cpuSeconds: number;
  readonly residentBytes: number;
}

/** Reads this process's figures from the runtime. */
export function readProcessFigures(): ProcessFigures {
  const { user, system } = process.cpuUsage();
  return { cpuSeconds: (user + system) / 1e6, residentBytes: Deno.memoryUsage().rss };
}

/**
 * Exports the process's figures on `metrics`, read at every scrape by `read`; the start time is the runtime's
 * time origin unless `startedAtMs` says otherwise.
 */
export function exportProcessMetrics(
  metrics: Metrics,
  read: () => ProcessFigures = readProcessFigures,
  startedAtMs: number = performance.timeOrigin,
): void {
  metrics.gauge("process_start_time_seconds").set(Math.floor(startedAtMs / 1000));
  const cpu = metrics.counter("process_cpu_seconds_total");
  const resident = metrics.gauge("process_resident_memory_bytes");
  let cpuCounted = 0;
  metrics.beforeRender(() => {
    const figures = read();
    // A counter only goes up: the CPU time read is added as the part not counted yet.
    if (figures.cpuSeconds > cpuCounted) {
      cpu.inc(figures.cpuSeconds - cpuCounted);
      cpuCounted = figures.cpuSeconds;
    }
    resident.set(figures.residentBytes);
  });
}
