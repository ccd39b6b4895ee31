/**
 * Runs analysis on snapshots, off the push path: snapshots only mark the state changed; a run starts at most
 * once per interval, the first snapshot after a run arming it, and runs in event-loop slices, so a push is
 * never held back by analysis. A snapshot that arrives during a run gets a run of its own afterwards.
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import { LoopSlices } from "@mesh/shared/time/loop_slices";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import { Debouncer } from "../config/debouncer.ts";
import type { Analyzer } from "./analyzer.ts";
import type { AnalysisInput } from "./analysis_input.ts";
import { analyzeSliced, messagesByResource } from "./analysis_runner.ts";
import type { AnalysisSink } from "./analysis_sink.ts";

/** The reference's snapshot debounce: analysis waits at most this long after a change. */
export const DEFAULT_ANALYSIS_INTERVAL_MS = 1000;

/** Options of {@link AnalysisScheduler}. */
export interface AnalysisSchedulerOptions {
  /** Reads the current state; called once at the start of each run. */
  readonly input: () => AnalysisInput;
  /** The analyzers to run (already chosen for the mode: file mode passes those needing no orchestrator). */
  readonly analyzers: readonly Analyzer[];
  /** Where each run's result goes. */
  readonly sinks: readonly AnalysisSink[];
  /** Least time between the starts of two runs; a snapshot waits this long. */
  readonly intervalMs?: number;
  readonly timers?: Timers;
  /** How long a slice of analysis runs before the event loop gets a turn (LoopSlices' default when absent). */
  readonly sliceMs?: number;
  readonly log: Logger;
  /**
   * Whether the sources are listed (the config store, the orchestrator's objects): a run due before waits an
   * interval and looks again, since analysis of a half-listed state reports what is not listed yet as missing.
   * Always ready when absent.
   */
  readonly ready?: () => boolean;
}

/** Debounced, sliced analysis of the latest snapshot. */
export class AnalysisScheduler {
  readonly #options: AnalysisSchedulerOptions;
  readonly #timers: Timers;
  readonly #debouncer: Debouncer;
  #running: Promise<void> | undefined;
  #again = false;
  #closed = false;

  constructor(options: AnalysisSchedulerOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
    const intervalMs = options.intervalMs ?? DEFAULT_ANALYSIS_INTERVAL_MS;
    this.#debouncer = new Debouncer(() => this.#start(), {
      delayMs: intervalMs,
      maxDelayMs: intervalMs,
      timers: this.#timers,
    });
  }

  /** Notes a new snapshot; returns at once. */
  snapshot(): void {
    if (!this.#closed) this.#debouncer.trigger();
  }

  /** Resolves when no run is in progress (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Cancels a scheduled run and waits for a running one; nothing runs afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#debouncer.cancel();
    await this.idle();
  }

  #start(): void {
    if (this.#options.ready?.() === false) {
      this.#debouncer.trigger();
      return;
    }
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#run().finally(() => {
      this.#running = undefined;
      if (this.#again && !this.#closed) {
        this.#again = false;
        this.#start();
      }
    });
  }

  async #run(): Promise<void> {
    const { log, analyzers, sinks } = this.#options;
    try {
      const slices = new LoopSlices(this.#options.sliceMs, () => this.#timers.now());
      const messages = await analyzeSliced(this.#options.input(), analyzers, slices);
      if (this.#closed) return;
      const byResource = messagesByResource(messages);
      for (const sink of sinks) await sink.publish(byResource);
    } catch (error) {
      log.error("configuration analysis failed; the previous messages stay", {
        error: (error as Error)?.message ?? String(error),
      });
    }
  }
}
