/**
 * The worker behind {@link IsolatedFsWatcher}: places one `Deno.watchFs` and posts its events. The runtime's
 * watcher opens the files it reports on, so a FIFO under the watched folder blocks its thread until a writer
 * comes, and closing it then blocks the thread that closes it; here that thread is this worker's, never the
 * server's, and the worker is dropped rather than closed.
 *
 * @module
 */
import type { WatchMessage, WatchRequest } from "./isolated_fs_watcher.ts";

/** The most events one message carries. */
const MAX_BATCH = 1024;

const scope = globalThis as unknown as {
  onmessage: ((message: MessageEvent<WatchRequest>) => void) | null;
  postMessage(message: WatchMessage): void;
};

scope.onmessage = async ({ data }) => {
  let watcher: Deno.FsWatcher;
  try {
    watcher = Deno.watchFs(data.path, { recursive: data.recursive });
  } catch (error) {
    scope.postMessage({ type: "error", message: (error as Error).message });
    return;
  }
  scope.postMessage({ type: "ready" });
  // Events are posted in batches, each a turn of this worker's loop long (at most MAX_BATCH): a message per
  // event made the server decode and dispatch thousands of messages when thousands of files were written.
  const pending: Deno.FsEvent[] = [];
  let flushQueued = false;
  const flush = () => {
    flushQueued = false;
    if (pending.length > 0) scope.postMessage({ type: "events", events: pending.splice(0) });
  };
  try {
    for await (const { kind, paths, flag } of watcher) {
      pending.push({ kind, paths, ...(flag !== undefined && { flag }) });
      if (pending.length >= MAX_BATCH) flush();
      else if (!flushQueued) {
        flushQueued = true;
        setTimeout(flush, 0);
      }
    }
    flush();
    scope.postMessage({ type: "end" });
  } catch (error) {
    flush();
    scope.postMessage({ type: "error", message: (error as Error).message });
  }
};
