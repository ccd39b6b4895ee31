/**
 * The push queue: at most one pending request per proxy connection (later requests merge into it, keeping
 * its place), and at most `throttle` pushes running at once. A request for a connection whose push is
 * running is held and queued again when that push ends, so one connection never has two pushes at once; nor
 * does one group of connections (the ADS streams of one HTTP/2 connection), whose pushes would otherwise hold
 * slots while they wait for their turn at its transport.
 *
 * @module
 */

/** Runs one push; `queuedMs` is how long the request waited in the queue. */
export type PushRunner<K, R> = (key: K, request: R, queuedMs: number) => Promise<void>;

/** Settings and collaborators of a PushQueue. */
export interface PushQueueOptions<K, R> {
  /** Pushes in flight at once; at least 1. */
  readonly throttle: number;
  /** Combines an older pending request with a newer one. */
  readonly merge: (older: R, newer: R) => R;
  /** Runs one push for a key; never two at once for the same key. */
  readonly run: PushRunner<K, R>;
  /** Called when a runner rejects; the queue carries on. */
  readonly onError?: (key: K, error: unknown) => void;
  /** Monotonic milliseconds; `performance.now` unless a test supplies a clock. */
  readonly now?: () => number;
  /**
   * The group of a key (the HTTP/2 connection of a stream): a group has at most one push running, and its
   * other keys keep their place while keys of other groups pass them. Undefined puts a key in no group.
   */
  readonly groupOf?: (key: K) => unknown;
}

/** Queue lengths for the debug interface and tests. */
export interface PushQueueStats {
  /** Keys with a request waiting to run (one request per key). */
  readonly pending: number;
  /** Pushes running now. */
  readonly inFlight: number;
}

interface Pending<R> {
  request: R;
  readonly enqueuedAt: number;
}

/** A FIFO of connections to push, merged per connection and throttled. */
export class PushQueue<K, R> {
  /** Insertion order is queue order; merging into an existing entry keeps its place. */
  readonly #pending = new Map<K, Pending<R>>();
  /** Connections being pushed, each with the request that arrived meanwhile (if any). */
  readonly #inFlight = new Map<K, Pending<R> | undefined>();
  /** The group of each running push that has one; a group appears at most once. */
  readonly #runningGroups = new Map<K, unknown>();
  readonly #busyGroups = new Set<unknown>();
  readonly #now: () => number;
  #pumpScheduled = false;
  #closed = false;

  /** Throws RangeError when `options.throttle` is below 1. */
  constructor(readonly options: PushQueueOptions<K, R>) {
    if (!(options.throttle >= 1)) {
      throw new RangeError(
        `Invalid push throttle "${options.throttle}": expected at least 1 concurrent push`,
      );
    }
    this.#now = options.now ?? (() => performance.now());
  }

  /** Queues `request` for `key`, merging it with any request already waiting for that key. */
  enqueue(key: K, request: R): void {
    if (this.#closed) return;
    if (this.#inFlight.has(key)) {
      const held = this.#inFlight.get(key);
      this.#inFlight.set(
        key,
        held === undefined
          ? { request, enqueuedAt: this.#now() }
          : { request: this.options.merge(held.request, request), enqueuedAt: held.enqueuedAt },
      );
      return;
    }
    const pending = this.#pending.get(key);
    if (pending !== undefined) {
      pending.request = this.options.merge(pending.request, request);
      return;
    }
    this.#pending.set(key, { request, enqueuedAt: this.#now() });
    this.#schedulePump();
  }

  /** Forgets a connection's waiting and held requests (its running push, if any, finishes on its own). */
  remove(key: K): void {
    this.#pending.delete(key);
    if (this.#inFlight.has(key)) this.#inFlight.set(key, undefined);
  }

  /** Counts of waiting and running pushes. */
  stats(): PushQueueStats {
    return { pending: this.#pending.size, inFlight: this.#inFlight.size };
  }

  /** Drops every waiting request and accepts no more; running pushes finish on their own. */
  close(): void {
    this.#closed = true;
    this.#pending.clear();
    for (const key of this.#inFlight.keys()) this.#inFlight.set(key, undefined);
  }

  /** Starting pushes in a later task lets a caller enqueue every connection before any generation runs. */
  #schedulePump(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    queueMicrotask(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  #pump(): void {
    // By key, not by entry: a key passed over (its group busy) costs no [key, value] pair, and the streams
    // of a connection carrying many are passed over on every pump until their turn.
    for (const key of this.#pending.keys()) {
      if (this.#closed || this.#inFlight.size >= this.options.throttle) return;
      const group = this.options.groupOf?.(key);
      if (group !== undefined) {
        // A connection whose push is running would make this one wait on its transport, holding a slot.
        if (this.#busyGroups.has(group)) continue;
        this.#busyGroups.add(group);
        this.#runningGroups.set(key, group);
      }
      const pending = this.#pending.get(key)!;
      this.#pending.delete(key);
      this.#inFlight.set(key, undefined);
      this.#start(key, pending);
    }
  }

  #start(key: K, pending: Pending<R>): void {
    let running: Promise<void>;
    try {
      running = this.options.run(key, pending.request, this.#now() - pending.enqueuedAt);
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(() => this.#done(key), (error) => {
      try {
        this.options.onError?.(key, error);
      } finally {
        this.#done(key);
      }
    });
  }

  #done(key: K): void {
    const held = this.#inFlight.get(key);
    this.#inFlight.delete(key);
    if (this.#runningGroups.has(key)) {
      this.#busyGroups.delete(this.#runningGroups.get(key));
      this.#runningGroups.delete(key);
    }
    if (held !== undefined && !this.#closed) {
      const waiting = this.#pending.get(key);
      this.#pending.set(
        key,
        waiting === undefined ? held : {
          request: this.options.merge(held.request, waiting.request),
          enqueuedAt: held.enqueuedAt,
        },
      );
    }
    this.#pump();
  }
}
