import type { Metrics } from "@mesh/shared/metrics/metrics";
import { jsonResponse, type Router } from "@mesh/shared/http/router";

/** One condition for readiness; returns why it is not met, or undefined when it is. */
export interface ReadinessCheck {
  readonly name: string;
  check(): string | undefined;
}

/** The answer of a readiness evaluation. */
export interface ReadinessStatus {
  readonly ready: boolean;
  /** `name: reason` of each unmet check. */
  readonly reasons: readonly string[];
}

/** Options of Readiness. */
export interface ReadinessOptions {
  /** Sets `startup_duration_seconds` the first time every check passes. */
  readonly metrics?: Metrics;
  /** `performance.now()` at process start. */
  readonly startedAt?: number;
}

/**
 * Whether the server is ready: every check passes (sources synced, registries synced, ...). The first time it
 * is, `startup_duration_seconds` is set; readiness is re-evaluated on every call and never cached.
 */
export class Readiness {
  readonly #checks: ReadinessCheck[] = [];
  readonly #options: ReadinessOptions;
  #becameReady = false;

  constructor(checks: readonly ReadinessCheck[] = [], options: ReadinessOptions = {}) {
    this.#checks.push(...checks);
    this.#options = options;
  }

  /** Adds a condition. */
  add(check: ReadinessCheck): this {
    this.#checks.push(check);
    return this;
  }

  /** Evaluates every check now. */
  status(): ReadinessStatus {
    const reasons: string[] = [];
    for (const c of this.#checks) {
      let reason: string | undefined;
      try {
        reason = c.check();
      } catch (error) {
        reason = `check failed: ${(error as Error)?.message ?? error}`;
      }
      if (reason !== undefined) reasons.push(`${c.name}: ${reason}`);
    }
    const ready = reasons.length === 0;
    if (ready && !this.#becameReady) {
      this.#becameReady = true;
      if (this.#options.metrics && this.#options.startedAt !== undefined) {
        this.#options.metrics.gauge("startup_duration_seconds").set(
          (performance.now() - this.#options.startedAt) / 1000,
        );
      }
    }
    return { ready, reasons };
  }

  /** Resolves once ready, polling every `intervalMs`; rejects with the signal's reason when aborted. */
  async whenReady(intervalMs = 100, signal?: AbortSignal): Promise<void> {
    while (!this.status().ready) {
      signal?.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          clearTimeout(timer);
          reject(signal!.reason);
        };
        const timer = setTimeout(() => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        }, intervalMs);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
  }
}

/** A check that passes once `synced()` is true. */
export function syncedCheck(name: string, synced: () => boolean, waitingFor: () => string): ReadinessCheck {
  return { name, check: () => synced() ? undefined : waitingFor() };
}

/** Adds `/ready`: 200 `{"ready": true}` when ready, else 503 with the reasons. */
export function addReadyRoute(router: Router, readiness: Readiness): Router {
  router.add("/ready", "200 when every source has synced, 503 with the reasons before", () => {
    const status = readiness.status();
    return status.ready
      ? jsonResponse({ ready: true })
      : jsonResponse({ error: `Not ready: ${status.reasons.join("; ")}`, reasons: status.reasons }, 503);
  });
  return router;
}
