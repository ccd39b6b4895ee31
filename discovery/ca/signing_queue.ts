/**
 * The CA's signing queue: at most `concurrency` signings run at once, at most `queueSize` more wait in arrival
 * order, and a request past that is refused at once. Each signing is a few short stretches of event-loop work
 * between asynchronous WebCrypto steps; unbounded, a thousand of them interleave and every other callback of
 * the process (readiness, pushes) waits behind all their stretches. Bounded, it waits behind a few.
 *
 * @module
 */

/** The bounds of a `SigningQueue`. */
export interface SigningQueueLimits {
  /** Signings running at once; at least 1. */
  readonly concurrency: number;
  /** Signings waiting at most; 0 refuses whenever every slot is taken. */
  readonly queueSize: number;
}

/** Every slot is taken and the queue is full; the request was not started. */
export class SigningQueueFullError extends Error {
  constructor(readonly waiting: number) {
    super(`Signing queue full: ${waiting} requests are waiting`);
    this.name = "SigningQueueFullError";
  }
}

/** Counts of the queue, for tests and debugging. */
export interface SigningQueueStats {
  /** Signings running. */
  readonly running: number;
  /** Signings waiting for a slot. */
  readonly waiting: number;
}

/** A FIFO counting semaphore with a bounded waiting list. */
export class SigningQueue {
  readonly #limits: SigningQueueLimits;
  /** Each waiter's start: called with the slot its predecessor hands over. */
  readonly #waiting: (() => void)[] = [];
  #running = 0;

  /** Throws RangeError for bounds outside their ranges. */
  constructor(limits: SigningQueueLimits) {
    if (!Number.isInteger(limits.concurrency) || limits.concurrency < 1) {
      throw new RangeError(`Invalid signing concurrency "${limits.concurrency}": expected an integer ≥ 1`);
    }
    if (!Number.isInteger(limits.queueSize) || limits.queueSize < 0) {
      throw new RangeError(`Invalid signing queue size "${limits.queueSize}": expected an integer ≥ 0`);
    }
    this.#limits = limits;
  }

  /** Running and waiting signings. */
  get stats(): SigningQueueStats {
    return { running: this.#running, waiting: this.#waiting.length };
  }

  /**
   * Runs `job` once a slot is free. A request that ends (`signal` aborted) while waiting leaves the queue.
   *
   * @throws {SigningQueueFullError} at once when every slot is taken and the queue is full
   */
  async run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.#running >= this.#limits.concurrency) {
      if (this.#waiting.length >= this.#limits.queueSize) {
        throw new SigningQueueFullError(this.#waiting.length);
      }
      await this.#wait(signal);
    } else {
      this.#running++;
    }
    try {
      signal?.throwIfAborted();
      return await job();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }

  /** Resolves holding the slot its predecessor handed over. */
  #wait(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const start = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        const index = this.#waiting.indexOf(start);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(start);
    });
  }
}
