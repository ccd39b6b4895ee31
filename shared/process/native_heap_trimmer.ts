/**
 * Trims the native heap on a period, so memory a burst of connections took (an HTTP/2 stream flood, a storm of
 * proxies) goes back to the kernel once they are gone, instead of staying resident as free chunks of glibc's
 * main arena. The trim runs whether or not anything changed: deciding from RSS would miss exactly this case,
 * where the pages are free to glibc but resident to the kernel, and a trim with nothing to return is cheap.
 *
 * @module
 */
import type { Logger } from "../log/logger.ts";
import type { Component } from "../lifecycle/component.ts";
import { systemTimers, type Timers } from "../time/timers.ts";
import { PeriodicTask } from "../time/periodic_task.ts";
import { type MallocTrim, type MallocTrimBinding, openMallocTrim } from "./malloc_trim.ts";

/** Released memory below this is not logged. */
const LOG_FROM_BYTES = 1024 * 1024;

/** What a {@link NativeHeapTrimmer} calls and when. */
export interface NativeHeapTrimmerOptions {
  /** Milliseconds between the end of one trim and the start of the next; positive. */
  readonly intervalMs: number;
  readonly trim: MallocTrim;
  /** The process's resident set size in bytes, read around each trim for the log. */
  readonly rssBytes?: () => number;
  readonly timers?: Timers;
  readonly logger: Logger;
}

/** Calls `trim` every `intervalMs` from `start()` until `stop()`, one call at a time. */
export class NativeHeapTrimmer {
  readonly #options: NativeHeapTrimmerOptions;
  readonly #timers: Timers;
  readonly #rssBytes: () => number;
  readonly #task: PeriodicTask;

  /** @throws {RangeError} when `intervalMs` is not a positive finite number */
  constructor(options: NativeHeapTrimmerOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
    this.#rssBytes = options.rssBytes ?? (() => Deno.memoryUsage().rss);
    this.#task = new PeriodicTask(
      "Native heap trim",
      options.intervalMs,
      () => this.#trimOnce(),
      this.#timers,
    );
  }

  /** Schedules the first trim one interval from now. */
  start(): void {
    this.#task.start();
  }

  /** Cancels the next trim and waits for one in progress. */
  stop(): Promise<void> {
    return this.#task.stop();
  }

  async #trimOnce(): Promise<void> {
    const { logger } = this.#options;
    const before = this.#rssBytes();
    const started = this.#timers.now();
    try {
      await this.#options.trim();
    } catch (error) {
      // A failing trim leaves the memory where it was; the server goes on, and so does the schedule.
      logger.warn("Native heap trim failed", { error: (error as Error)?.message ?? String(error) });
      return;
    }
    const released = before - this.#rssBytes();
    if (released >= LOG_FROM_BYTES) {
      logger.debug("Native heap trimmed", {
        releasedMiB: Math.round(released / 1048576),
        ms: Math.round(this.#timers.now() - started),
      });
    }
  }
}

/**
 * The lifecycle component that trims every `intervalMs` (0: never) while the program runs; where `malloc_trim`
 * cannot be bound (no FFI permission, no glibc) it logs why once at start and does nothing.
 */
export function nativeHeapTrimming(
  intervalMs: number,
  logger: Logger,
  open: () => MallocTrimBinding = openMallocTrim,
  timers?: Timers,
): Component {
  let trimmer: NativeHeapTrimmer | undefined;
  return {
    name: "native heap trim",
    start() {
      if (intervalMs === 0) return;
      const binding = open();
      if ("unavailable" in binding) {
        logger.info("Native heap trimming is off", { reason: binding.unavailable });
        return;
      }
      trimmer = new NativeHeapTrimmer({ intervalMs, trim: binding.trim, logger, ...(timers && { timers }) });
      trimmer.start();
      logger.info("Native heap trimming on", { everyMs: intervalMs, library: binding.library });
    },
    stop: () => trimmer?.stop(),
  };
}
