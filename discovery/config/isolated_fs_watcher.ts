import { LoopSlices } from "@mesh/shared/time/loop_slices";

/** What the watcher worker is asked to watch. */
export interface WatchRequest {
  readonly path: string;
  readonly recursive: boolean;
}

/** What the watcher worker posts: ready, events in order, the end of the watch, or why it failed or ended. */
export type WatchMessage =
  | { readonly type: "ready" }
  | { readonly type: "events"; readonly events: readonly Deno.FsEvent[] }
  | { readonly type: "end" }
  | { readonly type: "error"; readonly message: string };

/**
 * A `Deno.watchFs` run in a worker of its own. The runtime's watcher opens each file it reports on: a FIFO
 * created under the folder blocks it (no event is delivered again) until something writes to the FIFO, and
 * closing a watcher so blocked blocks the closing thread for good, which took SIGTERM handling with it. In a
 * worker, only that worker's thread is lost: {@link close} drops the worker without waiting for it.
 */
export class IsolatedFsWatcher implements AsyncIterable<Deno.FsEvent> {
  readonly #worker: Worker;
  /** Slices in which queued events are handed out (a fresh one after each wait for events). */
  readonly #slices: () => LoopSlices;
  /** Events received and not yet handed out, in the batches the worker posted them in. */
  readonly #batches: (readonly Deno.FsEvent[])[] = [];
  #wake: (() => void) | undefined;
  #ended = false;
  #error: Error | undefined;

  private constructor(worker: Worker, slices: () => LoopSlices) {
    this.#worker = worker;
    this.#slices = slices;
  }

  /**
   * Places a watch on `path` in a new worker; resolves once it is placed.
   *
   * `slices` makes the slices queued events are handed out in (`LoopSlices` of the default length).
   *
   * @throws {Error} when the watch cannot be placed (the path is gone or not readable)
   */
  static open(
    path: string,
    recursive: boolean,
    slices: () => LoopSlices = () => new LoopSlices(),
  ): Promise<IsolatedFsWatcher> {
    const worker = new Worker(new URL("./fs_watch_worker.ts", import.meta.url).href, { type: "module" });
    const watcher = new IsolatedFsWatcher(worker, slices);
    return new Promise((resolve, reject) => {
      worker.onmessage = ({ data }: MessageEvent<WatchMessage>) => {
        if (data.type === "ready") {
          worker.onmessage = ({ data }: MessageEvent<WatchMessage>) => watcher.#receive(data);
          resolve(watcher);
        } else {
          worker.terminate();
          reject(new Error(data.type === "error" ? data.message : `Watch on "${path}" ended at once`));
        }
      };
      worker.onerror = (event) => {
        event.preventDefault();
        const message = `Watcher worker for "${path}" failed: ${event.message}`;
        // Before the watch is placed this rejects the open; after, it ends the iteration with the error.
        watcher.#receive({ type: "error", message });
        reject(new Error(message));
      };
      worker.postMessage({ path, recursive } satisfies WatchRequest);
    });
  }

  /** Ends the watch: the worker is dropped, the iteration ends. Never blocks. */
  close(): void {
    if (this.#ended) return;
    this.#worker.terminate();
    this.#ended = true;
    this.#signal();
  }

  /**
   * The watch's events, until it is closed or fails (then the iteration throws why). A long queue is handed
   * out in slices of the event loop: a burst of thousands of events never holds the loop for its whole length.
   */
  async *[Symbol.asyncIterator](): AsyncIterator<Deno.FsEvent> {
    let slices = this.#slices();
    while (true) {
      const batch = this.#batches.shift();
      if (batch !== undefined) {
        for (const event of batch) {
          await slices.pause();
          yield event;
        }
        continue;
      }
      if (this.#error) throw this.#error;
      if (this.#ended) return;
      await new Promise<void>((resolve) => this.#wake = resolve);
      slices = this.#slices();
    }
  }

  #receive(message: WatchMessage): void {
    if (this.#ended) return;
    if (message.type === "events") this.#batches.push(message.events);
    else {
      if (message.type === "error") this.#error = new Error(message.message);
      this.#worker.terminate();
      this.#ended = true;
    }
    this.#signal();
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
