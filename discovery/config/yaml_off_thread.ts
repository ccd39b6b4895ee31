import {
  parseYamlDocuments,
  type YamlDocument,
  type YamlProblem,
  type YamlStream,
} from "../../shared/config/mesh/yaml_documents.ts";

/** Files at least this large are parsed by a worker: one document of them can take the parser past 50 ms. */
export const OFF_THREAD_BYTES = 128 * 1024;

/** What the worker answers: every document without its field positions, and the syntax errors. */
export interface ParsedOffThread {
  readonly documents: readonly Omit<YamlDocument, "lineOf">[];
  readonly errors: readonly YamlProblem[];
}

/**
 * {@link parseYamlDocuments} in a worker, for texts whose single documents are too large to parse in slices:
 * the event loop only receives the decoded values. Field lines (`lineOf`, wanted only to report a problem)
 * come from parsing the text again here, once, on first use. Falls back to parsing here when the worker
 * fails.
 */
export async function parseYamlOffThread(text: string): Promise<YamlStream> {
  let parsed: ParsedOffThread;
  try {
    parsed = await inWorker(text);
  } catch {
    return parseYamlDocuments(text);
  }
  // Decoding the worker's answer took a slice of its own: what the caller does with it starts in the next.
  await new Promise((resolve) => setTimeout(resolve, 0));
  let here: YamlStream | undefined;
  const lineOf = (index: number, path: string) => {
    here ??= parseYamlDocuments(text);
    return here.documents.find((d) => d.index === index)?.lineOf(path);
  };
  return {
    errors: parsed.errors,
    documents: parsed.documents.map((d) => ({
      ...d,
      lineOf: (path: string) => path === "" ? d.line : lineOf(d.index, path),
    })),
  };
}

function inWorker(text: string): Promise<ParsedOffThread> {
  const worker = new Worker(new URL("./yaml_worker.ts", import.meta.url).href, { type: "module" });
  return new Promise<ParsedOffThread>((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<ParsedOffThread>) => resolve(event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      reject(new Error(`YAML worker failed: ${event.message}`));
    };
    worker.postMessage(text);
  }).finally(() => worker.terminate());
}
