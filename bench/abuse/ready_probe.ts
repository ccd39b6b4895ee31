/**
 * Polls the server's `/ready` the way a kubelet does (a new connection per probe, every 100 ms) and records
 * each answer's latency, the failures, and the longest time between two good answers: an event-loop stall
 * shows as that gap. Each failure is kept with its error and when it happened, to lay beside the attack's
 * phases.
 *
 * @module
 */
import { type LatencySummary, summarize } from "../latency_stats.ts";

/** One failed probe: when it started (epoch ms), how long it took, and what went wrong. */
export interface ProbeFailure {
  readonly atMs: number;
  readonly tookMs: number;
  /** The status when the server answered other than 200, else the error and its causes. */
  readonly error: string;
}

/** What the probe saw. */
export interface ReadySummary {
  readonly latency: LatencySummary;
  /** Probes that failed: refused, reset, timed out, or not 200. */
  readonly failures: number;
  /** The first failures, in order (at most {@link MAX_FAILURES_KEPT}). */
  readonly failed?: readonly ProbeFailure[];
  /** The longest interval between two good answers (or from the start to the first), in ms. */
  readonly maxGapMs: number;
}

const MAX_FAILURES_KEPT = 50;

/** An error and its chain of causes on one line. */
function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 5; depth++) {
    if (e instanceof Error) {
      const code = (e as { code?: unknown }).code;
      parts.push(`${e.name}${code === undefined ? "" : ` ${code}`}: ${e.message}`);
      e = e.cause;
    } else {
      parts.push(String(e));
      break;
    }
  }
  return parts.join(" <- ");
}

/** Polls `url` every `intervalMs` until `stop()`; each probe times out after `timeoutMs`. */
export class ReadyProbe {
  readonly #latencies: number[] = [];
  readonly #failed: ProbeFailure[] = [];
  #failures = 0;
  #maxGapMs = 0;
  #running = true;
  readonly #loop: Promise<void>;

  constructor(readonly url: string, readonly intervalMs = 100, readonly timeoutMs = 5_000) {
    this.#loop = this.#run();
  }

  #fail(atMs: number, started: number, error: string): void {
    this.#failures++;
    if (this.#failed.length < MAX_FAILURES_KEPT) {
      this.#failed.push({ atMs, tookMs: Math.round(performance.now() - started), error });
    }
  }

  async #run(): Promise<void> {
    let lastGood = performance.now();
    while (this.#running) {
      const started = performance.now();
      const atMs = Date.now();
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
          this.#fail(atMs, started, `status ${response.status}`);
        }
      } catch (error) {
        this.#fail(atMs, started, describeError(error));
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
      failed: [...this.#failed],
      maxGapMs: Math.round(this.#maxGapMs),
    };
  }
}
