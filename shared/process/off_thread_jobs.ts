/**
 * Work too large for the event loop, done by one worker thread a job at a time: the event loop keeps serving
 * while the worker judges a 3 MiB document. Jobs wait in one queue per key (a caller's address) and go to the
 * worker in turn, one key after the other, so one caller sending large jobs as fast as it can delays another
 * caller's job by at most one of its own. A job still waiting at its deadline is refused without being run:
 * whoever sent it has given up. The worker starts with the first job and ends after a quiet spell, so an idle
 * server holds no second isolate.
 *
 * Ending a worker does not stop the job it runs: on Deno 2.9.3 `terminate()` takes effect only once the
 * worker's JavaScript returns (measured: a worker ended 1 s into a 5 s loop used a core and its heap for the 4 s
 * left, and ran the message queued behind it too; one ended while its module loaded never ran its job). So a
 * worker ended for running too long counts as running while its job says it runs, through a flag in memory both
 * threads share (10 minutes at most), and while two such workers run no new one starts: the jobs wait, and slow
 * jobs hold at most two threads in all, not one more each time the limit is reached.
 *
 * @module
 */
import { systemTimers, type Timers } from "../time/timers.ts";

/** A job that waited past its deadline for its turn and was not run. */
export class JobExpiredError extends Error {
  override name = "JobExpiredError";
}

function expired(now: number, deadline: number): JobExpiredError {
  return new JobExpiredError(`the job waited past its deadline by ${Math.round(now - deadline)} ms`);
}

/** What the main thread posts to the worker. */
export interface JobMessage<J> {
  readonly id: number;
  readonly job: J;
  /** An `Int32Array`'s memory, shared: the worker sets it to 1 while it runs the job, and to 0 once it ends. */
  readonly busy?: SharedArrayBuffer;
}

/** What the worker answers: the job's result, or the message of what it threw. */
export type JobAnswer<R> =
  | { readonly id: number; readonly ok: true; readonly result: R }
  | { readonly id: number; readonly ok: false; readonly error: string };

/** The part of a `Worker` this queue uses; tests pass a fake. */
export interface JobWorker {
  onmessage: ((event: MessageEvent) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
  postMessage(message: unknown): void;
  terminate(): void;
}

/** Options of {@link OffThreadJobs}. */
export interface OffThreadJobsOptions {
  /** The worker module, which calls {@link serveJobs}. */
  readonly worker: URL;
  /** Ends the worker after this long without a job (default 30 s). */
  readonly idleMs?: number;
  /** A job running longer than this fails and its worker is ended; the next job gets a new one (default 60 s). */
  readonly maxRunMs?: number;
  readonly timers?: Timers;
  /** Starts a worker (default: a module `Worker`, with the parent's permissions). */
  readonly spawn?: (module: URL) => JobWorker;
}

/** A worker and the flag its running job clears when it finishes. */
interface Started {
  readonly handle: JobWorker;
  readonly busy: Int32Array;
}

/** How many workers ended while their jobs ran may still be running them before no new worker starts. */
const MAX_ENDED_RUNNING = 2;
/** How often a wait for an ended worker's job looks at its flag again. */
const ENDED_POLL_MS = 100;
/**
 * How long an ended worker whose flag is still set counts as running. A runtime whose `terminate()` does stop a
 * job leaves the flag set for good (the job's `finally` never runs); the pool must not wait for it forever.
 */
const ENDED_RUNNING_AT_MOST_MS = 10 * 60_000;

interface Waiting<J, R> {
  readonly job: J;
  readonly deadline: number;
  readonly resolve: (result: R) => void;
  readonly reject: (error: Error) => void;
}

/** Runs jobs of type `J` in one worker thread, fairly between keys, and answers with their results `R`. */
export class OffThreadJobs<J, R> {
  readonly #options: OffThreadJobsOptions;
  readonly #timers: Timers;
  /** Keys in the order of their turns; a key is here exactly while its queue is not empty. */
  readonly #queues = new Map<string, Waiting<J, R>[]>();
  #worker: Started | undefined;
  /** Workers ended while their job ran: the job's flag, and when; dropped once the job has finished. */
  #ended: { readonly busy: Int32Array; readonly at: number }[] = [];
  #endedTimer: unknown;
  #running: (Waiting<J, R> & { readonly id: number }) | undefined;
  /** The key of the job that ran last, until another key has had its turn. */
  #lastKey: string | undefined;
  #nextId = 0;
  #idleTimer: unknown;
  #runTimer: unknown;
  #closed = false;

  constructor(options: OffThreadJobsOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
  }

  /** Jobs waiting for their turn, over all keys (the one running not counted). */
  get waiting(): number {
    let count = 0;
    for (const queue of this.#queues.values()) count += queue.length;
    return count;
  }

  /** Whether a worker thread is alive. */
  get started(): boolean {
    return this.#worker !== undefined;
  }

  /**
   * Queues `job` under `key` and resolves with its result. Rejects with {@link JobExpiredError} when its turn
   * comes more than `maxWaitMs` after now, and with an `Error` when the job threw or the worker died while
   * running it (a new worker takes the next job).
   */
  run(key: string, job: J, maxWaitMs: number): Promise<R> {
    if (this.#closed) return Promise.reject(new Error("OffThreadJobs is closed: no job is accepted"));
    return new Promise<R>((resolve, reject) => {
      const queue = this.#queues.get(key);
      const waiting = { job, deadline: this.#timers.now() + maxWaitMs, resolve, reject };
      if (queue === undefined) this.#queues.set(key, [waiting]);
      else queue.push(waiting);
      this.#dispatch();
    });
  }

  /** Refuses every waiting job, fails the running one and ends the worker. */
  close(): void {
    this.#closed = true;
    const closed = new Error("OffThreadJobs closed before the job ran");
    for (const queue of this.#queues.values()) for (const waiting of queue) waiting.reject(closed);
    this.#queues.clear();
    this.#running?.reject(closed);
    this.#running = undefined;
    this.#timers.clearTimeout(this.#endedTimer);
    this.#endedTimer = undefined;
    this.#stopWorker();
  }

  #dispatch(): void {
    if (this.#running !== undefined || this.#endedTimer !== undefined) return;
    if (this.#worker === undefined && this.#waitForEnded()) return;
    const next = this.#nextWaiting();
    if (next === undefined) {
      this.#armIdle();
      return;
    }
    this.#timers.clearTimeout(this.#idleTimer);
    const worker = this.#worker ??= this.#startWorker();
    const id = this.#nextId++;
    this.#running = { ...next, id };
    const maxRunMs = this.#options.maxRunMs ?? 60_000;
    this.#runTimer = this.#timers.setTimeout(() => {
      this.#ended.push({ busy: worker.busy, at: this.#timers.now() });
      this.#fail(new Error(`The job ran longer than ${maxRunMs} ms; its worker was ended`));
    }, maxRunMs);
    worker.handle.postMessage(
      { id, job: next.job, busy: worker.busy.buffer as SharedArrayBuffer } satisfies JobMessage<J>,
    );
  }

  /**
   * Whether a new worker must wait for ended ones whose jobs still run; if so, refuses the jobs past their
   * deadline and looks again in a while.
   */
  #waitForEnded(): boolean {
    const now = this.#timers.now();
    this.#ended = this.#ended.filter((e) =>
      Atomics.load(e.busy, 0) === 1 && now - e.at < ENDED_RUNNING_AT_MOST_MS
    );
    if (this.#ended.length < MAX_ENDED_RUNNING || this.#queues.size === 0) return false;
    this.#refuseExpired();
    this.#endedTimer = this.#timers.setTimeout(() => {
      this.#endedTimer = undefined;
      this.#dispatch();
    }, ENDED_POLL_MS);
    return true;
  }

  /** Refuses every waiting job past its deadline, wherever it is in its queue. */
  #refuseExpired(): void {
    const now = this.#timers.now();
    for (const [key, queue] of this.#queues) {
      const kept = queue.filter((waiting) => {
        if (waiting.deadline >= now) return true;
        waiting.reject(expired(now, waiting.deadline));
        return false;
      });
      if (kept.length > 0) this.#queues.set(key, kept);
      else this.#queues.delete(key);
    }
  }

  /**
   * The head of the first key's queue, that key then going to the back of the turns; the key served last goes
   * behind every other key with a job waiting, however recently that key came. Expired heads are refused.
   */
  #nextWaiting(): Waiting<J, R> | undefined {
    const now = this.#timers.now();
    for (const [key, queue] of this.#queues) {
      this.#queues.delete(key);
      if (key === this.#lastKey && this.#queues.size > 0) {
        this.#queues.set(key, queue);
        this.#lastKey = undefined;
        continue;
      }
      let head = queue.shift();
      while (head !== undefined && head.deadline < now) {
        head.reject(expired(now, head.deadline));
        head = queue.shift();
      }
      if (queue.length > 0) this.#queues.set(key, queue);
      if (head !== undefined) {
        this.#lastKey = key;
        return head;
      }
    }
    return undefined;
  }

  #startWorker(): Started {
    const spawn = this.#options.spawn ??
      ((module: URL) => new Worker(module.href, { type: "module" }) as unknown as JobWorker);
    const worker = spawn(this.#options.worker);
    worker.onmessage = ({ data }: MessageEvent<JobAnswer<R>>) => {
      const running = this.#running;
      if (running === undefined || running.id !== data.id) return;
      this.#running = undefined;
      this.#timers.clearTimeout(this.#runTimer);
      if (data.ok) running.resolve(data.result);
      else running.reject(new Error(data.error));
      this.#dispatch();
    };
    worker.onerror = (event) => {
      // An uncaught error of the worker would end this process too; the job fails and the next worker runs.
      event.preventDefault();
      this.#fail(new Error(`The worker failed: ${event.message}`));
    };
    return { handle: worker, busy: new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT)) };
  }

  /** Fails the running job, ends its worker and gives the next job a new one. */
  #fail(error: Error): void {
    const running = this.#running;
    this.#running = undefined;
    this.#stopWorker();
    running?.reject(error);
    this.#dispatch();
  }

  #armIdle(): void {
    if (this.#worker === undefined) return;
    this.#timers.clearTimeout(this.#idleTimer);
    this.#idleTimer = this.#timers.setTimeout(() => {
      if (this.#running === undefined && this.waiting === 0) this.#stopWorker();
    }, this.#options.idleMs ?? 30_000);
  }

  #stopWorker(): void {
    this.#timers.clearTimeout(this.#idleTimer);
    this.#timers.clearTimeout(this.#runTimer);
    this.#worker?.handle.terminate();
    this.#worker = undefined;
  }
}

/** The worker's side: answers each {@link JobMessage} with `handle`'s result, or the message of what it threw. */
export function serveJobs<J, R>(handle: (job: J) => R): void {
  const scope = self as unknown as {
    onmessage: ((event: MessageEvent<JobMessage<J>>) => void) | null;
    postMessage(message: JobAnswer<R>): void;
  };
  scope.onmessage = ({ data }) => {
    const busy = data.busy === undefined ? undefined : new Int32Array(data.busy);
    if (busy !== undefined) Atomics.store(busy, 0, 1);
    let answer: JobAnswer<R>;
    try {
      answer = { id: data.id, ok: true, result: handle(data.job) };
    } catch (error) {
      answer = { id: data.id, ok: false, error: error instanceof Error ? error.message : String(error) };
    } finally {
      if (busy !== undefined) Atomics.store(busy, 0, 0);
    }
    scope.postMessage(answer);
  };
}
