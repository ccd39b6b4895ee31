/**
 * One full garbage collection once a burst of traffic has ended and the server is quiet. What a burst's peers
 * leave behind is garbage the runtime only frees when a major collection finds it: decoded requests, the JS
 * objects of closed HTTP/2 streams, which hold the native buffers of their last writes, and the V8 pages the
 * burst grew. A quiet server makes no garbage, so no major collection comes by itself, and V8's memory reducer
 * (which would collect an idle heap) is off because its collections broke the stall target of #36. This
 * collects once, shrinking the heap (`last-resort`: V8 also hands back its new space and pooled pages); the
 * periodic `malloc_trim` then returns the native pages the collection freed.
 *
 * The burst is read from a running count of what peers sent (a `TrafficMeter`: bytes received, a weight per
 * ended call). Every {@link BURST_CHECK_PERIOD_MS} the count's growth is added to the burst. A check that
 * finds the count grown by less than 1/{@link QUIET_FRACTION} of `minBytes`, with no push or build in flight,
 * is quiet; after {@link QUIET_MS} of quiet checks the server collects when the burst reached `minBytes` (at
 * most once every {@link MIN_COLLECTION_GAP_MS}), and the burst starts again from 0 either way. So a burst is
 * followed by one collection, a trickle below the quiet bound never adds up to one, and a server busy without
 * pause collects only once it pauses.
 *
 * @module
 */
import type { Logger } from "../log/logger.ts";
import type { Component } from "../lifecycle/component.ts";
import { systemTimers, type Timers } from "../time/timers.ts";
import { PeriodicTask } from "../time/periodic_task.ts";

/** Milliseconds between two checks of the traffic count. */
export const BURST_CHECK_PERIOD_MS = 5_000;
/** How long the server must have been quiet before it collects. */
export const QUIET_MS = 10_000;
/** A check period whose traffic is below `minBytes` divided by this is quiet. */
export const QUIET_FRACTION = 16;
/** Collections are at least this far apart, whatever the traffic does. */
export const MIN_COLLECTION_GAP_MS = 60_000;

/** A full collection that also shrinks the heap; synchronous. */
export type FullCollection = () => void;

/** What a {@link CollectionAfterBurst} watches and calls. */
export interface CollectionAfterBurstOptions {
  /** What peers sent so far, in bytes (a `TrafficMeter`'s total); never decreases. */
  readonly traffic: () => number;
  /** True while a push or a snapshot build is pending or in flight: the server is not quiet then. */
  readonly busy: () => boolean;
  readonly collect: FullCollection;
  /** Told of every collection that ran, with its pause in milliseconds (e.g. to count it in a metric). */
  readonly collected?: (ms: number) => void;
  /** The traffic a burst must reach to be followed by a collection, bytes; positive. */
  readonly minBytes: number;
  readonly timers?: Timers;
  readonly logger: Logger;
}

/** Checks the traffic every {@link BURST_CHECK_PERIOD_MS} from `start()` until `stop()`; collects after a burst. */
export class CollectionAfterBurst {
  readonly #options: CollectionAfterBurstOptions;
  readonly #timers: Timers;
  readonly #task: PeriodicTask;
  readonly #quietBelow: number;
  #started = false;
  #last = 0;
  #burst = 0;
  #quietSince: number | undefined;
  #lastCollection = -Infinity;

  /** @throws {RangeError} when `minBytes` is not a positive safe integer */
  constructor(options: CollectionAfterBurstOptions) {
    if (!Number.isSafeInteger(options.minBytes) || options.minBytes < 1) {
      throw new RangeError(`Collection burst "${options.minBytes}" bytes: expected a positive integer`);
    }
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
    this.#quietBelow = options.minBytes / QUIET_FRACTION;
    this.#task = new PeriodicTask("Burst check", BURST_CHECK_PERIOD_MS, () => this.#check(), this.#timers);
  }

  /** Schedules the first check one period from now; traffic before it is not counted. Idempotent. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#last = this.#options.traffic();
    this.#task.start();
  }

  /** Cancels the next check; idempotent. */
  stop(): Promise<void> {
    this.#started = false;
    return this.#task.stop();
  }

  #check(): void {
    const total = this.#options.traffic();
    const grown = Math.max(0, total - this.#last);
    this.#last = total;
    this.#burst += grown;
    const now = this.#timers.now();
    if (grown >= this.#quietBelow || this.#options.busy()) {
      this.#quietSince = undefined;
      return;
    }
    // A quiet check stands for the period before it.
    this.#quietSince ??= now - BURST_CHECK_PERIOD_MS;
    if (now - this.#quietSince < QUIET_MS) return;
    if (this.#burst < this.#options.minBytes) {
      this.#burst = 0;
      return;
    }
    if (now - this.#lastCollection < MIN_COLLECTION_GAP_MS) return;
    const burst = this.#burst;
    this.#burst = 0;
    this.#collect(burst);
  }

  #collect(burst: number): void {
    const started = this.#timers.now();
    try {
      this.#options.collect();
    } catch (error) {
      this.#options.logger.warn("Full collection after a burst failed", {
        error: (error as Error)?.message ?? String(error),
      });
      return;
    } finally {
      this.#lastCollection = this.#timers.now();
    }
    const ms = Math.round(this.#lastCollection - started);
    this.#options.collected?.(ms);
    this.#options.logger.info("Collected the heap after a burst", {
      burstMiB: Math.round(burst / 1048576),
      ms,
    });
  }
}

/** What the {@link collectionAfterBurst} component is given. */
export interface CollectionAfterBurstWiring {
  /** `minBytes`; 0: never. */
  readonly minBytes: number;
  readonly traffic: () => number;
  readonly busy: () => boolean;
  /** Undefined where the runtime offers no collection (V8's `gc` is exposed only with `--expose-gc`). */
  readonly collect: FullCollection | undefined;
  readonly collected?: (ms: number) => void;
  readonly logger: Logger;
  readonly timers?: Timers;
}

/**
 * The lifecycle component that collects after a burst of `minBytes` (0: never); without a collection to call it
 * logs that once at start and does nothing.
 */
export function collectionAfterBurst(wiring: CollectionAfterBurstWiring): Component {
  let watcher: CollectionAfterBurst | undefined;
  const { minBytes, collect, logger } = wiring;
  return {
    name: "collection after a burst",
    start() {
      if (minBytes === 0) return;
      if (collect === undefined) {
        logger.info("Collection after a burst is off", { reason: "V8's gc is not exposed (--expose-gc)" });
        return;
      }
      watcher = new CollectionAfterBurst({ ...wiring, collect });
      watcher.start();
      logger.info("Collection after a burst on", { minBytes, everyMs: BURST_CHECK_PERIOD_MS });
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
