import type { FileLoad, LoadedDocument } from "./config_file_load.ts";
import { type ArrayPiece, attachPiece } from "./large_array_pieces.ts";

/** Files at least this large are loaded by a worker: one document of them can take the parser past 50 ms. */
export const OFF_THREAD_BYTES = 128 * 1024;

/** Documents per part of the worker's answer, unless the request says otherwise. */
export const DOCUMENTS_PER_PART = 256;

/** What the worker is asked to load. */
export interface OffThreadRequest {
  readonly file: string;
  readonly text: string;
  readonly defaultNamespace: string;
  /** How many documents each part of the answer carries (default {@link DOCUMENTS_PER_PART}). */
  readonly documentsPerPart?: number;
  /** Nodes each piece of a document's large arrays carries (default `NODES_PER_PIECE`). */
  readonly nodesPerPiece?: number;
}

/** What the main thread sends the worker: the load to do, or the go-ahead for the next part of its answer. */
export type OffThreadMessage =
  | { readonly type: "load"; readonly request: OffThreadRequest }
  | { readonly type: "next" };

/**
 * A part of the worker's answer: documents, in order (their large arrays left empty), a piece of such an array
 * of the document at index `document`, or the end, with everything else the load found. The worker posts the
 * next part only when asked: a message is decoded in one go, holding the event loop as long as its size asks,
 * and messages already queued are decoded back to back.
 */
export type OffThreadPart =
  | { readonly type: "documents"; readonly documents: readonly LoadedDocument[] }
  | { readonly type: "piece"; readonly document: number; readonly piece: ArrayPiece }
  | { readonly type: "end"; readonly load: Omit<FileLoad, "documents"> };

/** Options of {@link loadConfigOffThread}. */
export interface OffThreadOptions {
  /** Called with the number of documents of each part received (tests count the parts). */
  readonly onPart?: (documents: number) => void;
  /** Called with the number of elements of each array piece received (tests count the pieces). */
  readonly onPiece?: (items: number) => void;
}

/**
 * `loadConfigText` in a worker, for texts whose single documents are too large to parse in slices: parsing and
 * validation (with the source lines of every problem) happen there, and the event loop only receives the
 * result, in parts with a turn of the loop between them. `fallback` (the same load, here) runs when the
 * worker fails.
 */
export async function loadConfigOffThread(
  request: OffThreadRequest,
  fallback: (request: OffThreadRequest) => FileLoad,
  options: OffThreadOptions = {},
): Promise<FileLoad> {
  let load: FileLoad;
  try {
    load = await inWorker(request, options);
  } catch {
    return fallback(request);
  }
  // Decoding the worker's answer took a slice of its own: what the caller does with it starts in the next.
  await new Promise((resolve) => setTimeout(resolve, 0));
  return load;
}

function inWorker(request: OffThreadRequest, options: OffThreadOptions): Promise<FileLoad> {
  const worker = new Worker(new URL("./yaml_worker.ts", import.meta.url).href, { type: "module" });
  const post = (message: OffThreadMessage) => worker.postMessage(message);
  const documents: LoadedDocument[] = [];
  return new Promise<FileLoad>((resolve, reject) => {
    worker.onmessage = ({ data }: MessageEvent<OffThreadPart>) => {
      if (data.type === "end") {
        resolve({ ...data.load, documents });
        return;
      }
      if (data.type === "piece") {
        const doc = documents[data.document];
        try {
          if (doc === undefined) {
            throw new RangeError(`Config piece for document ${data.document} came first`);
          }
          attachPiece(doc.resource, data.piece);
        } catch (error) {
          // A thrown handler would be an uncaught error of the server: the load falls back instead.
          reject(error);
          return;
        }
        options.onPiece?.(data.piece.items.length);
      } else {
        for (const doc of data.documents) documents.push(doc);
        options.onPart?.(data.documents.length);
      }
      setTimeout(() => post({ type: "next" }), 0);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      reject(new Error(`Config load worker failed: ${event.message}`));
    };
    post({ type: "load", request });
  }).finally(() => worker.terminate());
}
