/**
 * The worker behind {@link IsolatedFsWatcher}: places one `Deno.watchFs` and posts its events. The runtime's
 * watcher opens the files it reports on, so a FIFO under the watched folder blocks its thread until a writer
 * comes, and closing it then blocks the thread that closes it; here that thread is this worker's, never the
 * server's, and the worker is dropped rather than closed.
 *
 * @module
 */
import type { WatchMessage, WatchRequest } from "./isolated_fs_watcher.ts";

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
  try {
    for await (const { kind, paths, flag } of watcher) {
      scope.postMessage({ type: "event", event: { kind, paths, ...(flag !== undefined && { flag }) } });
    }
    scope.postMessage({ type: "end" });
  } catch (error) {
    scope.postMessage({ type: "error", message: (error as Error).message });
  }
};
