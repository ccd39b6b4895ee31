/**
 * The status port's `/stats/prometheus`: the expositions of several sources (the proxy, the agent, the
 * application) concatenated into one, so Prometheus scrapes one port per pod. A source that fails or is too
 * slow or too large is skipped with a `# ` comment line saying why, and the others are still served.
 *
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { FailureLog } from "./failure_log.ts";
import type { StatsSource } from "./stats_sources.ts";

/** The content type of the merged exposition: Prometheus text format 0.0.4. */
export const STATS_CONTENT_TYPE = "text/plain; version=0.0.4";

/** How long each source may take, by default: under Prometheus' default scrape timeout of 10 s. */
export const DEFAULT_STATS_TIMEOUT_MS = 5000;

/** The most bytes taken from each source, by default: room for a proxy with thousands of clusters. */
export const DEFAULT_STATS_MAX_BYTES = 32 * 1024 * 1024;

/** What a merged exposition is made from. */
export interface MergedStatsOptions {
  /** The sources, in the order their expositions are served. */
  readonly sources: readonly StatsSource[];
  /** How long each source may take (default {@link DEFAULT_STATS_TIMEOUT_MS}). */
  readonly timeoutMs?: number;
  /** The most bytes taken from each source (default {@link DEFAULT_STATS_MAX_BYTES}). */
  readonly maxBytes?: number;
  /** Counts `scrapes_total` and `scrape_failures_total` by source. */
  readonly metrics: Metrics;
  /** Where a failing source is logged, once until it recovers. */
  readonly log: Logger;
}

/**
 * Reads every source in parallel and concatenates what they return. Scrapes that arrive while one is being
 * made share it: however many callers ask at once, each source is read once and the exposition held once.
 */
export class MergedStats {
  readonly #options: MergedStatsOptions;
  readonly #failures: FailureLog;
  #inFlight: Promise<Uint8Array> | undefined;

  /** Merges `options.sources`. */
  constructor(options: MergedStatsOptions) {
    this.#options = options;
    this.#failures = new FailureLog(options.log, "metrics source");
  }

  /**
   * The merged exposition, UTF-8 encoded; never rejects. Callers while a scrape is under way get that scrape's
   * bytes, the same array: they must not write to it.
   */
  render(): Promise<Uint8Array> {
    this.#options.metrics.counter("scrapes_total").inc();
    this.#inFlight ??= this.#scrape().finally(() => this.#inFlight = undefined);
    return this.#inFlight;
  }

  async #scrape(): Promise<Uint8Array> {
    const parts = await Promise.all(this.#options.sources.map((source) => this.#read(source)));
    return new TextEncoder().encode(parts.join(""));
  }

  async #read(source: StatsSource): Promise<string> {
    const timeoutMs = this.#options.timeoutMs ?? DEFAULT_STATS_TIMEOUT_MS;
    const controller = new AbortController();
    const expired = Promise.withResolvers<never>();
    const timer = setTimeout(() => {
      const error = new Error(`no answer within ${timeoutMs} ms`);
      controller.abort(error);
      expired.reject(error);
    }, timeoutMs);
    try {
      // The race bounds a source that ignores the signal; the signal stops one that listens.
      const text = await Promise.race([
        source.read({
          signal: controller.signal,
          maxBytes: this.#options.maxBytes ?? DEFAULT_STATS_MAX_BYTES,
        }),
        expired.promise,
      ]);
      this.#failures.succeeded(source.name);
      return text === "" || text.endsWith("\n") ? text : `${text}\n`;
    } catch (error) {
      const reason = oneLine(
        controller.signal.aborted ? String(controller.signal.reason?.message) : describe(error),
      );
      this.#options.metrics.counter("scrape_failures_total").inc({ type: source.name });
      this.#failures.failed(source.name, reason);
      return `# mesh-agent skipped the ${source.name} metrics: ${reason}\n`;
    } finally {
      clearTimeout(timer);
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// A comment is one line: a line break inside the reason would start a line Prometheus cannot parse.
function oneLine(text: string): string {
  const flat = text.replace(/[\r\n]+/g, " ").trim();
  return flat.length <= 300 ? flat : `${flat.slice(0, 297)}...`;
}
