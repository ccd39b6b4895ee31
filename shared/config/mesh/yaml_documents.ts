import {
  Composer,
  type Document,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseAllDocuments,
  Parser,
} from "yaml";
import { LoopSlices } from "../../time/loop_slices.ts";

/** One document of a YAML (or JSON) stream, decoded, with a way back from field paths to source lines. */
export interface YamlDocument {
  /** 0-based position of the document in its stream (empty documents count too). */
  readonly index: number;
  /** 1-based line where the document's content starts. */
  readonly line: number;
  /** The decoded content: plain objects, arrays, strings, numbers, booleans and null. */
  readonly value: unknown;
  /**
   * The 1-based line of the field at `path` (`spec.http[0].route[1].weight`, `labels["a.b/c"]`): the key's
   * line for a map entry, the item's for a list element, or the line of the deepest existing ancestor when
   * the field is absent. Undefined when the path cannot be read.
   */
  lineOf(path: string): number | undefined;
}

/** A YAML syntax problem at a 1-based line and column. */
export interface YamlProblem {
  /** 1-based line of the problem. */
  readonly line: number;
  /** 1-based column of the problem. */
  readonly column: number;
  /** What is wrong, as the YAML parser says it. */
  readonly message: string;
}

/** A parsed stream: every non-empty document, or the syntax errors that make the stream unusable. */
export interface YamlStream {
  /** The non-empty documents, in stream order. */
  readonly documents: readonly YamlDocument[];
  /** Syntax errors anywhere in the stream; when present, no document of the stream should be trusted. */
  readonly errors: readonly YamlProblem[];
}

/**
 * Parses a multi-document YAML stream (JSON is accepted too) with YAML 1.2 core schema semantics and
 * duplicate keys as errors. Documents without content (`---` alone, comments only) are skipped.
 */
export function parseYamlDocuments(text: string): YamlStream {
  const lineCounter = new LineCounter();
  const parsed = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const position = (offset: number) => lineCounter.linePos(offset);
  const errors: YamlProblem[] = [];
  const documents: YamlDocument[] = [];
  for (const [index, doc] of parsed.entries()) addDocument(doc, index, position, documents, errors);
  return { documents, errors };
}

/**
 * Like {@link parseYamlDocuments}, one document at a time, letting other work run whenever a slice has taken
 * `sliceMs` (default 20 ms): a large file never holds the event loop for long.
 */
export async function parseYamlDocumentsSliced(text: string, sliceMs = 20): Promise<YamlStream> {
  const lineCounter = new LineCounter();
  const position = (offset: number) => lineCounter.linePos(offset);
  const errors: YamlProblem[] = [];
  const documents: YamlDocument[] = [];
  const composer = new Composer({ prettyErrors: false, uniqueKeys: true });
  const tokens = new Parser(lineCounter.addNewLine).parse(text);
  let index = 0;
  const slices = new LoopSlices(sliceMs);
  const all = (function* () {
    for (const token of tokens) yield* composer.next(token);
    yield* composer.end(false, text.length);
  })();
  for (const doc of all) {
    addDocument(doc as Document.Parsed, index++, position, documents, errors);
    await slices.pause();
  }
  return { documents, errors };
}

function addDocument(
  doc: Document.Parsed,
  index: number,
  position: (offset: number) => { line: number; col: number },
  documents: YamlDocument[],
  errors: YamlProblem[],
): void {
  {
    for (const error of doc.errors) {
      const { line, col } = position(error.pos[0]);
      errors.push({ line, column: col, message: firstLine(error.message) });
    }
    if (doc.errors.length > 0 || doc.contents === null) return;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (error) {
      const { line, col } = position(doc.contents.range[0]);
      errors.push({ line, column: col, message: firstLine(String((error as Error).message ?? error)) });
      return;
    }
    // `---` followed directly by `---` yields an empty scalar: there is nothing to load.
    if (value === null || value === undefined) return;
    const root = doc.contents as Node;
    documents.push({
      index,
      line: position(root.range?.[0] ?? 0).line,
      value,
      lineOf: (path) => {
        const segments = parseFieldPath(path);
        if (segments === undefined) return undefined;
        const offset = offsetOf(root, segments);
        return offset === undefined ? undefined : position(offset).line;
      },
    });
  }
}

/** Splits a field path (`a.b[0]["c.d"]`) into keys and indexes; undefined when it is malformed. */
export function parseFieldPath(path: string): (string | number)[] | undefined {
  const out: (string | number)[] = [];
  let rest = path;
  while (rest !== "") {
    let m: RegExpExecArray | null;
    if ((m = /^\[(\d+)\]/.exec(rest))) out.push(Number(m[1]));
    else if ((m = /^\[("(?:[^"\\]|\\.)*")\]/.exec(rest))) out.push(JSON.parse(m[1]) as string);
    else if ((m = /^\.?([^.[\]]+)/.exec(rest))) out.push(m[1]);
    else return undefined;
    rest = rest.slice(m[0].length);
  }
  return out;
}

/** Joins a prefix path and a path relative to it (`items[2]` + `spec.hosts` → `items[2].spec.hosts`). */
export function joinFieldPath(prefix: string, path: string): string {
  if (prefix === "") return path;
  if (path === "") return prefix;
  return path.startsWith("[") ? `${prefix}${path}` : `${prefix}.${path}`;
}

/** Source offset of the node at `segments` below `node` (or of its deepest existing ancestor). */
function offsetOf(node: Node, segments: readonly (string | number)[]): number | undefined {
  let current: unknown = node;
  let offset = node.range?.[0];
  for (const segment of segments) {
    if (isMap(current)) {
      const pair = current.items.find((p) => isPair(p) && keyText(p.key) === String(segment));
      if (!pair) break;
      const key = pair.key as Node | null;
      offset = key?.range?.[0] ?? offset;
      current = pair.value;
    } else if (isSeq(current) && typeof segment === "number") {
      const item = current.items[segment] as Node | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      current = item;
    } else {
      break;
    }
  }
  return offset;
}

function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  return undefined;
}

function firstLine(message: string): string {
  return message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
}
