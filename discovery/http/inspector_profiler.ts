import { Session } from "node:inspector";
import { setTimeout as sleep } from "node:timers/promises";

/** Profiling is unavailable in this process (e.g. the inspector needs `--allow-sys`). */
export class ProfilerUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ProfilerUnavailableError";
  }
}

/** Takes profiles of this process. */
export interface Profiler {
  /** Samples the CPU for `seconds` and returns the profile in V8's `.cpuprofile` JSON form. */
  cpuProfile(seconds: number, signal?: AbortSignal): Promise<unknown>;
  /** Takes a heap snapshot and returns it in V8's `.heapsnapshot` JSON form, as text chunks. */
  heapSnapshot(): Promise<string[]>;
  /**
   * Samples allocations for `seconds` and returns V8's `.heapprofile` JSON. With `promotedOnly`, only
   * allocations that outlived a young-generation collection are kept: what fills the old generation.
   */
  allocationProfile(
    seconds: number,
    options?: AllocationProfileOptions,
    signal?: AbortSignal,
  ): Promise<unknown>;
}

/** What an allocation profile keeps. */
export interface AllocationProfileOptions {
  /** Keep only allocations that survived a young-generation collection (those collected later included). */
  readonly promotedOnly?: boolean;
}

/** Waits out a profile's `ms` milliseconds of sampling; rejects when `signal` aborts. */
export type ProfileWindow = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Mean bytes between two allocation samples (V8's default). */
const ALLOCATION_SAMPLING_BYTES = 32 * 1024;

/**
 * A profiler over V8's inspector (`node:inspector`). In Deno 2.9.6 connecting needs the unscoped `--allow-sys`
 * permission (`--allow-sys=inspector` is rejected as an unknown descriptor); without it every call fails with
 * ProfilerUnavailableError saying so.
 */
export class InspectorProfiler implements Profiler {
  // One profile of each kind at a time: V8 keeps a single sampler per kind, which a second session would restart.
  readonly #busy = new Set<string>();
  readonly #window: ProfileWindow;

  /** `window` waits out each sampling period: the runtime's timer unless a test opens and closes it. */
  constructor(options: { readonly window?: ProfileWindow } = {}) {
    this.#window = options.window ?? ((ms, signal) => sleep(ms, undefined, { signal }));
  }

  cpuProfile(seconds: number, signal?: AbortSignal): Promise<unknown> {
    return this.#sample("CPU profile", async (session) => {
      await post(session, "Profiler.enable");
      await post(session, "Profiler.start");
      await this.#window(seconds * 1000, signal);
      const result = await post(session, "Profiler.stop") as { profile: unknown };
      return result.profile;
    });
  }

  allocationProfile(
    seconds: number,
    options: AllocationProfileOptions = {},
    signal?: AbortSignal,
  ): Promise<unknown> {
    return this.#sample("allocation profile", async (session) => {
      await post(session, "HeapProfiler.enable");
      await post(session, "HeapProfiler.startSampling", {
        samplingInterval: ALLOCATION_SAMPLING_BYTES,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: !options.promotedOnly,
      });
      await this.#window(seconds * 1000, signal);
      const result = await post(session, "HeapProfiler.stopSampling") as { profile: unknown };
      return result.profile;
    });
  }

  async #sample<T>(kind: string, take: (session: Session) => Promise<T>): Promise<T> {
    if (this.#busy.has(kind)) {
      throw new ProfilerUnavailableError(`A ${kind} is already being taken; try again later`);
    }
    this.#busy.add(kind);
    const session = connect();
    try {
      return await take(session);
    } finally {
      this.#busy.delete(kind);
      session.disconnect();
    }
  }

  async heapSnapshot(): Promise<string[]> {
    const session = connect();
    const chunks: string[] = [];
    session.on("HeapProfiler.addHeapSnapshotChunk", (message: { params: { chunk: string } }) => {
      chunks.push(message.params.chunk);
    });
    // The inspector answers on the event loop; without a pending timer Deno may consider the loop idle.
    const keepAlive = setInterval(() => {}, 1000);
    try {
      await post(session, "HeapProfiler.enable");
      await post(session, "HeapProfiler.takeHeapSnapshot", { reportProgress: false });
      return chunks;
    } finally {
      clearInterval(keepAlive);
      session.disconnect();
    }
  }
}

function connect(): Session {
  const session = new Session();
  try {
    session.connect();
  } catch (cause) {
    throw new ProfilerUnavailableError(
      `Cannot connect to the V8 inspector: ${(cause as Error)?.message ?? cause}; ` +
        `profiling needs the unscoped --allow-sys permission (Deno rejects --allow-sys=inspector)`,
      { cause },
    );
  }
  return session;
}

function post(session: Session, method: string, params: object = {}): Promise<unknown> {
  return new Promise((resolve, reject) => {
    // deno-lint-ignore no-explicit-any
    (session.post as any)(method, params, (error: Error | null, result: unknown) => {
      if (error) reject(error);
      else resolve(result);
    });
  });
}
