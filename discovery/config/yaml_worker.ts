/**
 * The worker behind `loadConfigOffThread`: loads the config file text it is sent (parse and validation)
 * and answers with the {@link FileLoad}, plain data, in parts: a part of documents each time the main thread
 * asks for the next, then the rest.
 *
 * @module
 */
import { type FileLoad, loadConfigText } from "./config_file_load.ts";
import { DOCUMENTS_PER_PART, type OffThreadMessage, type OffThreadPart } from "./yaml_off_thread.ts";

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<OffThreadMessage>) => void) | null;
  postMessage(message: OffThreadPart): void;
};

let load: FileLoad | undefined;
let sent = 0;
let perPart = DOCUMENTS_PER_PART;

function postNext(): void {
  if (load === undefined) return;
  if (sent < load.documents.length) {
    const documents = load.documents.slice(sent, sent + perPart);
    sent += documents.length;
    scope.postMessage({ type: "documents", documents });
    return;
  }
  const { documents: _, ...rest } = load;
  scope.postMessage({ type: "end", load: rest });
}

scope.onmessage = ({ data }) => {
  if (data.type === "load") {
    const { file, text, defaultNamespace, documentsPerPart } = data.request;
    perPart = Math.max(1, documentsPerPart ?? DOCUMENTS_PER_PART);
    load = loadConfigText(file, text, defaultNamespace);
  }
  postNext();
};
