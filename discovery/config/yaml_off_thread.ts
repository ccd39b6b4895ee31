import type { FileLoad } from "./config_file_load.ts";

/** Files at least this large are loaded by a worker: one document of them can take the parser past 50 ms. */
export const OFF_THREAD_BYTES = 128 * 1024;

/** What the worker is asked to load. */
export interface OffThreadRequest {
  readonly file: string;
  readonly text: string;
  readonly defaultNamespace: string;
}

/**
 * `loadConfigText` in a worker, for texts whose single documents are too large to parse in slices: parsing and
 * validation (with the source lines of every problem) happen there, and the event loop only receives the
 * result. `fallback` (the same load, here) runs when the worker fails.
 */
export async function loadConfigOffThread(
  request: OffThreadRequest,
  fallback: (request: OffThreadRequest) => FileLoad,
): Promise<FileLoad> {
  let load: FileLoad;
  try {
    load = await inWorker(request);
  } catch {
    return fallback(request);
  }
  // Decoding the worker's answer took a slice of its own: what the caller does with it starts in the next.
  await new Promise((resolve) => setTimeout(resolve, 0));
  return load;
}

function inWorker(request: OffThreadRequest): Promise<FileLoad> {
  const worker = new Worker(new URL("./yaml_worker.ts", import.meta.url).href, { type: "module" });
  return new Promise<FileLoad>((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<FileLoad>) => resolve(event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      reject(new Error(`Config load worker failed: ${event.message}`));
    };
    worker.postMessage(request);
  }).finally(() => worker.terminate());
}
