/**
 * One full garbage collection once the count of something a burst can inflate (a server's open streams) has
 * fallen far below its high-water mark and stayed there. What the burst's peers left behind is garbage the
 * runtime only frees when a major collection finds it: the JS objects of closed HTTP/2 streams, which hold
 * the native buffers of their last writes, and the V8 pages the burst grew. A quiet server makes no
 * garbage, so no major collection comes by itself, and V8's memory reducer (which would collect an idle heap)
 * is off because its collections broke the stall target of #36. This collects once, shrinking the heap
 * (`last-resort`: V8 also hands back its new space and pooled pages); the periodic `malloc_trim` then returns
 * the native pages the collection freed.
 *
 * The collection runs only after a fall of at least `minDrop` that also halved the count, seen at two checks
 * in a row (so the peers' teardown has finished), at most once every {@link MIN_COLLECTION_GAP_MS}, and the
 * high-water mark starts again from the count after it: a steady fleet never triggers it, a churning one at
 * most once a minute.
 *
 * @module
 */
import type { Logger } from "../log/logger.ts";
import type { Component } from "../lifecycle/component.ts";
import { systemTimers, type Timers } from "../time/timers.ts";
import { PeriodicTask } from "../time/periodic_task.ts";

/** Milliseconds between two checks of the count. */
export const DROP_CHECK_PERIOD_MS = 10_000;
/** Collections are at least this far apart, whatever the count does. */
export const MIN_COLLECTION_GAP_MS = 60_000;

/** A count now and the most it reached since it was last read (then the peak starts again from now). */
export interface CountAndPeak {
  readonly now: number;
  readonly peak: number;
}

/** A full collection that also shrinks the heap; synchronous. */
export type FullCollection = () => void;

/** What a {@link CollectionAfterDrop} watches and calls. */
export interface CollectionAfterDropOptions {
  /** The count now (e.g. open streams) and its peak since the last read. */
  readonly counts: () => CountAndPeak;
  readonly collect: FullCollection;
  /** How far below its high-water mark the count must fall; positive. */
  readonly minDrop: number;
  readonly timers?: Timers;
  readonly logger: Logger;
}

/** Checks `count` every {@link DROP_CHECK_PERIOD_MS} from `start()` until `stop()`; collects after a fall. */
export class CollectionAfterDrop {
  readonly #options: CollectionAfterDropOptions;
  readonly #timers: Timers;
  readonly #task: PeriodicTask;
  #started = false;
  #high = 0;
  #downBefore = false;
  #lastCollection = -Infinity;

  /** @throws {RangeError} when `minDrop` is not a positive integer */
  constructor(options: CollectionAfterDropOptions) {
    if (!Number.isInteger(options.minDrop) || options.minDrop < 1) {
      throw new RangeError(`Collection drop "${options.minDrop}": expected a positive integer`);
    }
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
    this.#task = new PeriodicTask("Drop check", DROP_CHECK_PERIOD_MS, () => this.#check(), this.#timers);
  }

  /** Schedules the first check one period from now; idempotent. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#high = this.#options.counts().peak;
    this.#task.start();
  }

  /** Cancels the next check; idempotent. */
  stop(): Promise<void> {
    this.#started = false;
    return this.#task.stop();
  }

  #check(): void {
    const { now: count, peak } = this.#options.counts();
    if (peak > this.#high) this.#high = peak;
    const down = this.#high - count >= this.#options.minDrop && count * 2 <= this.#high;
    const due = down && this.#downBefore &&
      this.#timers.now() - this.#lastCollection >= MIN_COLLECTION_GAP_MS;
    this.#downBefore = down;
    if (!due) return;
    const from = this.#high;
    const started = this.#timers.now();
    try {
      this.#options.collect();
    } catch (error) {
      this.#options.logger.warn("Full collection after a drop failed", {
        error: (error as Error)?.message ?? String(error),
      });
    }
    this.#lastCollection = this.#timers.now();
    this.#high = count;
    this.#downBefore = false;
    this.#options.logger.info("Collected the heap after a drop", {
      from,
      to: count,
      ms: Math.round(this.#lastCollection - started),
    });
  }
}

/**
 * The lifecycle component that collects after a drop of `minDrop` (0: never) in `counts`; where the runtime
 * offers no collection (`collect` undefined: V8's `gc` is exposed only with `--expose-gc`) it logs that once at
 * start and does nothing.
 */
export function collectionAfterDrop(
  minDrop: number,
  counts: () => CountAndPeak,
  collect: FullCollection | undefined,
  logger: Logger,
  timers?: Timers,
): Component {
  let watcher: CollectionAfterDrop | undefined;
  return {
    name: "collection after a drop",
    start() {
      if (minDrop === 0) return;
      if (collect === undefined) {
        logger.info("Collection after a drop is off", { reason: "V8's gc is not exposed (--expose-gc)" });
        return;
      }
      watcher = new CollectionAfterDrop({ counts, collect, minDrop, logger, ...(timers && { timers }) });
      watcher.start();
      logger.info("Collection after a drop on", { minDrop, everyMs: DROP_CHECK_PERIOD_MS });
    },
    stop: () => watcher?.stop(),
  };
}

/**
 * V8's `gc` as a {@link FullCollection} that shrinks the heap, when the runtime exposes it (`--expose-gc`);
 * undefined otherwise. `runtime` is the global object.
 */
export function exposedFullCollection(runtime: object = globalThis): FullCollection | undefined {
  const gc = (runtime as { gc?: (options?: object) => unknown }).gc;
  if (typeof gc !== "function") return undefined;
  return () => void gc({ type: "major", execution: "sync", flavor: "last-resort" });
}
