import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import type { PushRequest, TriggerReason } from "./push_request.ts";
import { PendingPush } from "./pending_push.ts";

/** Debounce settings, from DISCOVERY_DEBOUNCE_AFTER, DISCOVERY_DEBOUNCE_MAX, DISCOVERY_ENABLE_EDS_DEBOUNCE. */
export interface DebounceOptions {
  /** Quiet period: a push waits until no request arrived for this long. */
  readonly afterMs: number;
  /** A push is forced this long after the first request merged into it, even if requests keep coming. */
  readonly maxMs: number;
  /** When false, endpoint-only requests skip debouncing and are pushed at once. */
  readonly enableEdsDebounce: boolean;
}

/** Receives merged requests; while a returned promise is pending, further pushes wait. */
export type PushHandler = (request: PushRequest) => void | Promise<void>;

/** What a {@link PushDebouncer} reports to and keeps time with; all optional. */
export interface PushDebouncerDeps {
  readonly metrics?: Metrics;
  readonly log?: Logger;
  /** A monotonic clock, so setting the wall clock neither holds a push back nor forces one. */
  readonly timers?: Timers;
  /**
   * True while the config store is writing changes that belong together (`ConfigStore.writing`): a push
   * waits for the end, or for `maxMs` after its first request, as it waits for a quiet period.
   */
  readonly held?: () => boolean;
}

/**
 * Merges push requests: a push goes out once requests have been quiet for `afterMs` and the store is not
 * writing a batch (`held`), or `maxMs` after the first one, and never while the previous push is still running
 * (requests keep merging meanwhile). Each push counts its reasons in `discovery_push_triggers`.
 */
export class PushDebouncer {
  readonly #push: PushHandler;
  readonly #options: DebounceOptions;
  readonly #metrics?: Metrics;
  readonly #log?: Logger;
  readonly #timers: Timers;
  readonly #held: () => boolean;
  #pending?: PendingPush;
  #events = 0;
  #firstAt = 0;
  #lastAt = 0;
  #timer: unknown;
  #busy = false;
  #closed = false;

  /** Calls `push` with each merged request. */
  constructor(push: PushHandler, options: DebounceOptions, deps: PushDebouncerDeps = {}) {
    this.#push = push;
    this.#options = options;
    this.#metrics = deps.metrics;
    this.#log = deps.log;
    this.#timers = deps.timers ?? systemTimers;
    this.#held = deps.held ?? (() => false);
  }

  /** Adds a request; endpoint-only requests bypass the delay when EDS debouncing is off. */
  enqueue(request: PushRequest): void {
    if (this.#closed) return;
    if (!request.full && !this.#options.enableEdsDebounce) {
      void this.#run(request, false);
      return;
    }
    const now = this.#timers.now();
    this.#lastAt = now;
    if (this.#events === 0) {
      this.#firstAt = now;
      this.#schedule(this.#options.afterMs);
    }
    this.#events++;
    (this.#pending ??= new PendingPush()).add(request);
  }

  /** Requests merged and not yet pushed. */
  get pendingEvents(): number {
    return this.#events;
  }

  /** True when no request is waiting and no push (snapshot build and hand-over) is running. */
  get idle(): boolean {
    return this.#events === 0 && !this.#busy;
  }

  /** Drops pending requests and stops the timer; later requests are ignored. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending = undefined;
    this.#events = 0;
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      if (!this.#busy) this.#check();
    }, Math.max(0, delayMs));
  }

  #check(): void {
    if (this.#closed || !this.#pending) return;
    const now = this.#timers.now();
    const quiet = now - this.#lastAt;
    const overdue = now - this.#firstAt >= this.#options.maxMs;
    if (overdue || (quiet >= this.#options.afterMs && !this.#held())) {
      const request = this.#pending.build()!;
      this.#pending = undefined;
      this.#events = 0;
      void this.#run(request, true);
    } else {
      // Held past the quiet period: looked at again a quiet period later (10 ms with no quiet period).
      this.#schedule(
        this.#options.afterMs - quiet > 0
          ? this.#options.afterMs - quiet
          : Math.max(this.#options.afterMs, 10),
      );
    }
  }

  async #run(request: PushRequest, serialized: boolean): Promise<void> {
    for (const [reason, count] of Object.entries(request.reasons) as [TriggerReason, number][]) {
      this.#metrics?.counter("discovery_push_triggers").inc({ type: reason }, count);
    }
    if (serialized) this.#busy = true;
    try {
      await this.#push(request);
    } catch (error) {
      this.#log?.error("push failed", { error: (error as Error)?.message ?? String(error) });
    } finally {
      if (serialized) {
        this.#busy = false;
        this.#check();
      }
    }
  }
}
