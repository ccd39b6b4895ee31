/**
 * Writes of one connection gathered per event-loop turn: every frame queued during a turn leaves in one
 * `write` at the turn's end, and while a write is pending nothing new starts; what is queued meanwhile
 * leaves in the next write, as soon as the pending one completes.
 *
 * @module
 */

/** Where a connection's bytes go: `Deno.Conn`, or a test's sink. */
export interface ByteSink {
  /** Writes some of `bytes`; resolves with how many were written. */
  write(bytes: Uint8Array): Promise<number>;
}

/**
 * Runs the flushes asked for during one turn together, at the end of the turn, from one timer: a push to
 * ten thousand connections costs one timer, not one per connection.
 */
export class TurnScheduler {
  #due: (() => void)[] = [];

  /** Runs `flush` once this turn's synchronous work (and its microtasks) is done. */
  schedule(flush: () => void): void {
    if (this.#due.push(flush) === 1) setTimeout(() => this.#run(), 0);
  }

  #run(): void {
    const due = this.#due;
    this.#due = [];
    for (const flush of due) flush();
  }
}

/** One connection's outgoing bytes, batched per turn, one write at a time. */
export class TurnWriter {
  #chunks: Uint8Array[] = [];
  #queuedBytes = 0;
  #scheduled = false;
  #writing = false;
  #failed = false;
  #idle: (() => void)[] = [];
  /** Writes started, for tests and reports. */
  writes = 0;

  constructor(
    private readonly sink: ByteSink,
    private readonly scheduler: TurnScheduler,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Queues `chunk` (kept by reference until written: it must not change meanwhile). */
  enqueue(chunk: Uint8Array): void {
    if (this.#failed || chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#queuedBytes += chunk.length;
    if (!this.#scheduled && !this.#writing) {
      this.#scheduled = true;
      this.scheduler.schedule(() => this.#flush());
    }
  }

  /** Bytes queued and not yet handed to a write. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** Resolves once nothing is queued or being written (at once if so already, or after a failure). */
  idle(): Promise<void> {
    if (this.#failed || (!this.#writing && !this.#scheduled && this.#chunks.length === 0)) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async #flush(): Promise<void> {
    this.#scheduled = false;
    this.#writing = true;
    try {
      while (this.#chunks.length > 0 && !this.#failed) {
        const bytes = this.#chunks.length === 1 ? this.#chunks[0] : concat(this.#chunks, this.#queuedBytes);
        this.#chunks = [];
        this.#queuedBytes = 0;
        this.writes++;
        for (let at = 0; at < bytes.length;) at += await this.sink.write(bytes.subarray(at));
      }
    } catch (error) {
      this.#failed = true;
      this.#chunks = [];
      this.#queuedBytes = 0;
      this.onError(error);
    } finally {
      this.#writing = false;
      const idle = this.#idle;
      this.#idle = [];
      for (const resolve of idle) resolve();
    }
  }
}

/** The chunks as one buffer of `total` bytes. */
function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
