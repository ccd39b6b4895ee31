/**
 * The worker behind `loadConfigOffThread`: loads the config file text it is sent (parse and validation)
 * and answers with the {@link FileLoad}, plain data, in parts: a part of documents each time the main thread
 * asks for the next, each large array of those documents in pieces after them, then the rest.
 *
 * @module
 */
import { type FileLoad, loadConfigText } from "./config_file_load.ts";
import { detachLargeArrays, NODES_PER_PIECE } from "./large_array_pieces.ts";
import { DOCUMENTS_PER_PART, type OffThreadMessage, type OffThreadPart } from "./yaml_off_thread.ts";

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<OffThreadMessage>) => void) | null;
  postMessage(message: OffThreadPart): void;
};

let load: FileLoad | undefined;
let sent = 0;
let perPart = DOCUMENTS_PER_PART;
let perPiece = NODES_PER_PIECE;
/** Pieces of the documents of the last part, still to post. */
let queued: OffThreadPart[] = [];

function postNext(): void {
  if (load === undefined) return;
  const next = queued.shift();
  if (next !== undefined) {
    scope.postMessage(next);
    return;
  }
  if (sent < load.documents.length) {
    const documents = load.documents.slice(sent, sent + perPart).map((doc, i) => {
      const { value, pieces } = detachLargeArrays(doc.resource, perPiece);
      for (const piece of pieces) queued.push({ type: "piece", document: sent + i, piece });
      return pieces.length === 0 ? doc : { ...doc, resource: value as typeof doc.resource };
    });
    sent += documents.length;
    scope.postMessage({ type: "documents", documents });
    return;
  }
  const { documents: _, ...rest } = load;
  scope.postMessage({ type: "end", load: rest });
}

scope.onmessage = ({ data }) => {
  if (data.type === "load") {
    const { file, text, defaultNamespace, documentsPerPart, nodesPerPiece } = data.request;
    perPart = Math.max(1, documentsPerPart ?? DOCUMENTS_PER_PART);
    perPiece = Math.max(1, nodesPerPiece ?? NODES_PER_PIECE);
    queued = [];
    load = loadConfigText(file, text, defaultNamespace);
  }
  postNext();
};
