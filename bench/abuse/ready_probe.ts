/**
 * Polls the server's `/ready` the way a kubelet does (a new connection per probe, every 100 ms) and records
 * each answer's latency, the failures, and the longest time between two good answers: an event-loop stall
 * shows as that gap.
 *
 * @module
 */
import { type LatencySummary, summarize } from "../latency_stats.ts";

/** What the probe saw. */
export interface ReadySummary {
  readonly latency: LatencySummary;
  /** Probes that failed: refused, reset, timed out, or not 200. */
  readonly failures: number;
  /** The longest interval between two good answers (or from the start to the first), in ms. */
  readonly maxGapMs: number;
}

/** Polls `url` every `intervalMs` until `stop()`; each probe times out after `timeoutMs`. */
export class ReadyProbe {
  readonly #latencies: number[] = [];
  #failures = 0;
  #maxGapMs = 0;
  #running = true;
  readonly #loop: Promise<void>;

  constructor(readonly url: string, readonly intervalMs = 100, readonly timeoutMs = 5_000) {
    this.#loop = this.#run();
  }

  async #run(): Promise<void> {
    let lastGood = performance.now();
    while (this.#running) {
      const started = performance.now();
      // A client per probe: a new connection each time, so a server out of connection slots shows.
      const client = Deno.createHttpClient({});
      try {
        const response = await fetch(this.url, { client, signal: AbortSignal.timeout(this.timeoutMs) });
        await response.body?.cancel();
        const now = performance.now();
        if (response.status === 200) {
          this.#latencies.push(now - started);
          this.#maxGapMs = Math.max(this.#maxGapMs, now - lastGood);
          lastGood = now;
        } else {
          this.#failures++;
        }
      } catch {
        this.#failures++;
      } finally {
        client.close();
      }
      const wait = this.intervalMs - (performance.now() - started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    this.#maxGapMs = Math.max(this.#maxGapMs, performance.now() - lastGood);
  }

  /** Ends polling and summarizes. */
  async stop(): Promise<ReadySummary> {
    this.#running = false;
    await this.#loop;
    return {
      latency: summarize(this.#latencies),
      failures: this.#failures,
      maxGapMs: Math.round(this.#maxGapMs),
    };
  }
}
