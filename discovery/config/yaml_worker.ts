/**
 * The worker behind {@link parseYamlOffThread}: parses the YAML text it is sent and answers with the
 * documents' values and lines (source positions of fields stay behind: the caller reparses for those).
 *
 * @module
 */
import { parseYamlDocuments } from "../../shared/config/mesh/yaml_documents.ts";
import type { ParsedOffThread } from "./yaml_off_thread.ts";

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<string>) => void) | null;
  postMessage(message: ParsedOffThread): void;
};

scope.onmessage = (event) => {
  const stream = parseYamlDocuments(event.data);
  scope.postMessage({
    documents: stream.documents.map(({ index, line, value }) => ({ index, line, value })),
    errors: stream.errors,
  });
};
