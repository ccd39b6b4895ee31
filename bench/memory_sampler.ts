/**
 * Samples a server's `Deno.memoryUsage()` from its ControlZ `/memj/` page while a benchmark runs, keeping the
 * peak of each figure: RSS alone cannot say whether memory is V8's heap or Buffers outside it (`external`).
 * It asks for V8's figures alone (`?native=false`): glibc's walk the arenas under their locks, a few ms of the
 * server's main thread per sample at 10,000 proxies, which the figures of the run would include.
 *
 * @module
 */

/** Peaks of the figures `Deno.memoryUsage()` reports, in bytes. */
export interface MemoryPeaks {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  /** Samples taken. */
  samples: number;
}

/** A running sampler; `stop()` ends it and returns the peaks. */
export interface MemorySampler {
  stop(): Promise<MemoryPeaks>;
}

/** Starts sampling `http://<ctrlzAddr>/memj/` every `intervalMs`; a failed sample is skipped. */
export function sampleMemory(ctrlzAddr: string, intervalMs = 250): MemorySampler {
  const peaks: MemoryPeaks = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, samples: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const response = await fetch(`http://${ctrlzAddr}/memj/?native=false`, {
          signal: AbortSignal.timeout(5000),
        });
        const usage = await response.json() as Omit<MemoryPeaks, "samples">;
        for (const key of ["rss", "heapTotal", "heapUsed", "external"] as const) {
          peaks[key] = Math.max(peaks[key], usage[key] ?? 0);
        }
        peaks.samples++;
      } catch {
        // A server too busy to answer within the timeout is sampled next time.
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return peaks;
    },
  };
}
