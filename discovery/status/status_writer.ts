/**
 * Writes parts of mesh resources' `status` through the orchestrator's status subresource, at most
 * `DISCOVERY_STATUS_QPS` requests a second after a burst of `DISCOVERY_STATUS_BURST`. Each write reads the
 * object fresh, changes only its own part of `status` and replaces the status naming the `resourceVersion` it
 * read: a 409 Conflict is retried from a new read, and an object whose spec moved past the generation the
 * status is about is left alone (the newer generation gets its own status). A failing or hanging API server
 * (every request ends after its timeout) delays the write with a growing backoff and never blocks the caller:
 * writes are queued, the newest per resource and part replacing an older one not yet sent.
 *
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import { RateLimiter } from "../orch/rate_limiter.ts";
import type { OrchHttp, OrchHttpResponse } from "../orch/orch_http.ts";

/** A mesh resource whose status is written, and the spec generation the status is about. */
export interface StatusRef {
  /** API group as served (`networking.mesh.io`); a 404 there tries the Istio group of the same name. */
  readonly group: string;
  readonly version: string;
  /** Plural resource name (`virtualservices`). */
  readonly plural: string;
  readonly namespace: string;
  readonly name: string;
  /** The generation the status describes; absent when it holds for any. */
  readonly generation?: number;
}

/** Returns the new status from the current one, or undefined when the current one needs no change. */
export type StatusChange = (
  current: Readonly<Record<string, unknown>>,
) => Record<string, unknown> | undefined;

/** How one queued write ended. */
export type WriteOutcome = "written" | "unchanged" | "stale" | "gone" | "failed" | "dropped";

/** What the writer needs. */
export interface StatusWriterOptions {
  /** Requests to the API server, each with its own deadline. */
  readonly http: OrchHttp;
  /** `DISCOVERY_STATUS_QPS`: requests a second. */
  readonly qps: number;
  /** `DISCOVERY_STATUS_BURST`: requests at once. */
  readonly burst: number;
  readonly log: Logger;
  /** Clock and timers of the rate limit and the backoff; the runtime's when absent. */
  readonly timers?: Timers;
  /** Writes in flight at once (default 4). */
  readonly workers?: number;
  /** Reads and writes of one attempt before a conflict counts as a failure (default 5). */
  readonly conflictRetries?: number;
  /** First delay after a failed write, doubled to 30 s (default 1 s). */
  readonly retryMs?: number;
  /** Called when a write ends, for tests and benchmarks. */
  readonly onOutcome?: (ref: StatusRef, part: string, outcome: WriteOutcome) => void;
}

interface Job {
  readonly ref: StatusRef;
  readonly part: string;
  readonly change: StatusChange;
  /** Aborted when the writer of this part stops leading: the write is dropped before its next request. */
  readonly signal?: AbortSignal;
  /** Failed attempts so far. */
  failures: number;
}

const MAX_RETRY_MS = 30_000;

/** Canonical group, then Istio's name for it. */
function groupsOf(group: string): string[] {
  return group.endsWith(".mesh.io") ? [group, group.replace(/\.mesh\.io$/, ".istio.io")] : [group];
}

function objectPath(ref: StatusRef, group: string): string {
  return `/apis/${group}/${ref.version}/namespaces/${ref.namespace}/${ref.plural}/${ref.name}`;
}

/** The queue and workers of status writes; one per replica, writing only while it leads. */
export class StatusWriter {
  readonly #options: StatusWriterOptions;
  readonly #timers: Timers;
  readonly #limiter: RateLimiter;
  /** `path|part` → the newest write not yet started. */
  readonly #queue = new Map<string, Job>();
  /** Keys being written now: a newer write of the same key waits for it. */
  readonly #running = new Set<string>();
  readonly #retryTimers = new Set<unknown>();
  readonly #idle = new Set<() => void>();
  #active = 0;
  #stopped = false;

  /** Builds the writer; nothing is sent until `write` is called. */
  constructor(options: StatusWriterOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
    this.#limiter = new RateLimiter(options.qps, options.burst, this.#timers);
  }

  /**
   * Queues a change of the part `part` of `ref`'s status (a later change of the same part replaces it while
   * queued). Returns at once. Once `signal` aborts (the duty that asked for it was lost) the write is dropped
   * before its next request.
   */
  write(ref: StatusRef, part: string, change: StatusChange, signal?: AbortSignal): void {
    if (this.#stopped || signal?.aborted) return;
    this.#queue.set(`${objectPath(ref, ref.group)}|${part}`, {
      ref,
      part,
      change,
      ...(signal ? { signal } : {}),
      failures: 0,
    });
    this.#pump();
  }

  /** Queues setting `status[field]` to `value` (undefined removes it), as analyzer messages are written. */
  writeField(ref: StatusRef, field: string, value: unknown, signal?: AbortSignal): void {
    this.write(ref, field, (current) => {
      if (JSON.stringify(current[field]) === JSON.stringify(value)) return undefined;
      const next = { ...current };
      if (value === undefined) delete next[field];
      else next[field] = value;
      return next;
    }, signal);
  }

  /** Writes queued or running. */
  get pending(): number {
    return this.#queue.size + this.#active;
  }

  /** Resolves when nothing is queued or running (retries waiting on their backoff are not counted). */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.add(resolve));
  }

  /** Drops every queued write and pending retry; running ones end after their request. */
  stop(): void {
    this.#stopped = true;
    this.#queue.clear();
    for (const id of this.#retryTimers) this.#timers.clearTimeout(id);
    this.#retryTimers.clear();
    this.#settle();
  }

  #pump(): void {
    const workers = this.#options.workers ?? 4;
    for (const [key, job] of this.#queue) {
      if (this.#active >= workers) return;
      if (this.#running.has(key)) continue;
      this.#queue.delete(key);
      this.#running.add(key);
      this.#active++;
      this.#run(job).finally(() => {
        this.#running.delete(key);
        this.#active--;
        this.#pump();
        this.#settle();
      });
    }
  }

  #settle(): void {
    if (this.pending > 0) return;
    for (const resolve of [...this.#idle]) resolve();
    this.#idle.clear();
  }

  async #run(job: Job): Promise<void> {
    let outcome: WriteOutcome;
    try {
      outcome = await this.#attempt(job);
    } catch (error) {
      if (error instanceof DroppedWrite) {
        outcome = "dropped";
      } else {
        outcome = "failed";
        this.#retry(job, error as Error);
      }
    }
    this.#options.onOutcome?.(job.ref, job.part, outcome);
  }

  #retry(job: Job, error: Error): void {
    job.failures++;
    const delay = Math.min(MAX_RETRY_MS, (this.#options.retryMs ?? 1_000) * 2 ** (job.failures - 1));
    if (job.failures === 1 || job.failures % 10 === 0) {
      this.#options.log.warn("status write failed; retrying", {
        resource: `${job.ref.plural}/${job.ref.namespace}/${job.ref.name}`,
        part: job.part,
        failures: job.failures,
        retryInMs: delay,
        error: error.message,
      });
    }
    if (this.#stopped) return;
    const id = this.#timers.setTimeout(() => {
      this.#retryTimers.delete(id);
      const key = `${objectPath(job.ref, job.ref.group)}|${job.part}`;
      // A newer write of the same part queued meanwhile supersedes this one.
      if (this.#stopped || job.signal?.aborted || this.#queue.has(key)) return;
      this.#queue.set(key, job);
      this.#pump();
    }, delay);
    this.#retryTimers.add(id);
  }

  async #request(job: Job, method: "GET" | "PUT", path: string, body?: unknown): Promise<OrchHttpResponse> {
    const wait = this.#limiter.take();
    if (wait > 0) await new Promise<void>((resolve) => this.#timers.setTimeout(resolve, wait));
    if (job.signal?.aborted || this.#stopped) throw new DroppedWrite();
    return await this.#options.http({ method, path, ...(body !== undefined ? { body } : {}) });
  }

  async #attempt(job: Job): Promise<WriteOutcome> {
    for (const group of groupsOf(job.ref.group)) {
      const outcome = await this.#attemptAt(job, objectPath(job.ref, group));
      if (outcome !== "gone") return outcome;
    }
    return "gone";
  }

  async #attemptAt(job: Job, path: string): Promise<WriteOutcome> {
    const attempts = this.#options.conflictRetries ?? 5;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const read = await this.#request(job, "GET", path);
      if (read.status === 404) return "gone";
      if (read.status !== 200) throw new Error(`GET ${path} answered ${read.status}: ${reason(read)}`);
      const object = read.body as { metadata?: { generation?: number }; status?: Record<string, unknown> };
      if (job.ref.generation !== undefined && object.metadata?.generation !== job.ref.generation) {
        return "stale";
      }
      const status = object.status !== null && typeof object.status === "object" ? object.status : {};
      const next = job.change(status);
      if (next === undefined) return "unchanged";
      const written = await this.#request(job, "PUT", `${path}/status`, { ...object, status: next });
      if (written.status === 409) continue;
      if (written.status === 404) return "gone";
      if (written.status < 200 || written.status > 299) {
        throw new Error(`PUT ${path}/status answered ${written.status}: ${reason(written)}`);
      }
      return "written";
    }
    throw new Error(`PUT ${path}/status conflicted ${attempts} times in a row: the object keeps changing`);
  }
}

/** The duty that asked for a write was lost, or the writer stopped, before its next request. */
class DroppedWrite extends Error {
  constructor() {
    super("The status write was dropped: its duty was lost or the writer stopped");
    this.name = "DroppedWrite";
  }
}

/** The message of a Status answer, cut short. */
function reason(response: OrchHttpResponse): string {
  const message = (response.body as { message?: unknown } | undefined)?.message;
  return typeof message === "string" ? message.slice(0, 200) : "no message";
}
