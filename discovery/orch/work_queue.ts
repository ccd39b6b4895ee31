import type { Logger } from "@mesh/shared/log/logger";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";

/** How a key's work is retried after a failure: the first delay, doubled up to the cap, reset by a success. */
export interface RetryPacing {
  /** First retry delay (default 1 s). */
  readonly retryMs?: number;
  /** Longest retry delay (default 30 s). */
  readonly maxRetryMs?: number;
  /** Timers of the retries; the runtime's when absent. */
  readonly timers?: Timers;
}

/**
 * A keyed work queue run by one worker, as the reference's controllers use: a key added while queued runs once,
 * a key added while its work runs runs again after it, and a key whose work throws is added again after a
 * backoff of its own. Writers to the orchestrator use it so that a burst of events costs one write per object.
 */
export class KeyedWorkQueue {
  readonly #work: (key: string) => Promise<void>;
  readonly #log: Logger;
  readonly #timers: Timers;
  readonly #firstRetryMs: number;
  readonly #maxRetryMs: number;
  readonly #pending = new Set<string>();
  readonly #retryMs = new Map<string, number>();
  readonly #timersByKey = new Map<string, unknown>();
  #running = false;
  #stopped = false;
  #idle: Promise<void> = Promise.resolve();

  constructor(work: (key: string) => Promise<void>, log: Logger, pacing: RetryPacing = {}) {
    this.#work = work;
    this.#log = log;
    this.#timers = pacing.timers ?? systemTimers;
    this.#firstRetryMs = pacing.retryMs ?? 1_000;
    this.#maxRetryMs = pacing.maxRetryMs ?? 30_000;
  }

  /** Queues `key` (again); a retry waiting for it is replaced by this run. */
  add(key: string): void {
    if (this.#stopped) return;
    const timer = this.#timersByKey.get(key);
    if (timer !== undefined) {
      this.#timers.clearTimeout(timer);
      this.#timersByKey.delete(key);
    }
    this.#pending.add(key);
    if (!this.#running) this.#idle = this.#drain();
  }

  /** Queues `key` after `ms`, unless something queues it sooner. */
  addAfter(key: string, ms: number): void {
    if (this.#stopped || this.#timersByKey.has(key)) return;
    this.#timersByKey.set(
      key,
      this.#timers.setTimeout(() => {
        this.#timersByKey.delete(key);
        this.add(key);
      }, ms),
    );
  }

  /** Resolves when nothing is queued or running (retries waiting on a timer do not count). */
  idle(): Promise<void> {
    return this.#idle;
  }

  /** Drops what is queued and every waiting retry; the work running now finishes. */
  stop(): Promise<void> {
    this.#stopped = true;
    this.#pending.clear();
    for (const timer of this.#timersByKey.values()) this.#timers.clearTimeout(timer);
    this.#timersByKey.clear();
    return this.#idle;
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      while (this.#pending.size > 0 && !this.#stopped) {
        const key = this.#pending.values().next().value!;
        this.#pending.delete(key);
        try {
          await this.#work(key);
          this.#retryMs.delete(key);
        } catch (error) {
          const retryMs = this.#retryMs.get(key) ?? this.#firstRetryMs;
          this.#retryMs.set(key, Math.min(this.#maxRetryMs, retryMs * 2));
          this.#log.warn("orchestrator write failed; retrying", {
            key,
            retryMs,
            error: error instanceof Error ? error.message : String(error),
          });
          this.addAfter(key, retryMs);
        }
      }
    } finally {
      this.#running = false;
    }
  }
}
