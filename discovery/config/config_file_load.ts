import type { Resource } from "@mesh/shared/config/resource";
import { resourceKey } from "@mesh/shared/config/resource";
import { canonicalGroup, findKind } from "@mesh/shared/config/kinds";
import { parseResource } from "@mesh/shared/config/validate_resource";
import type { Issue } from "@mesh/shared/config/validation/report";
import { isObject } from "@mesh/shared/config/validation/fields";
import {
  joinFieldPath,
  parseYamlDocuments,
  parseYamlDocumentsSliced,
  type YamlDocument,
  type YamlStream,
} from "@mesh/shared/config/mesh/yaml_documents";
import { flowNestingProblem, nestingError } from "./yaml_nesting.ts";
import { loadConfigOffThread, OFF_THREAD_BYTES } from "./yaml_off_thread.ts";
import { loadStreamSliced } from "./load_stream_sliced.ts";
import { DEFAULT_SLICE_MS } from "@mesh/shared/time/loop_slices";

/** A valid resource read from a file, with where it was written. */
export interface LoadedDocument {
  /** `kind/namespace/name`. */
  readonly key: string;
  readonly resource: Resource;
  readonly file: string;
  /** 1-based line of the document (or `List` item). */
  readonly line: number;
  /** Which document of the file: its 0-based index, with `.items[i]` for an item of a `List`. */
  readonly slot: string;
}

/** Why a document was refused, in the label values of `config_validation_failed`. */
export type RejectionReason = "yaml_decode_error" | "unknown_type" | "invalid_config";

/** A document of a file that was refused, with every error found in it. */
export interface DocumentRejection {
  /** Path of the file, as given. */
  readonly file: string;
  /** 1-based line where the refused document starts. */
  readonly line: number;
  /** Same meaning as {@link LoadedDocument.slot}; `*` for a problem with the whole file. */
  readonly slot: string;
  /** `kind/namespace/name` when the document names a resource well enough to find its last good version. */
  readonly key?: string;
  /** Kind of the resource, when the document names one. */
  readonly kind?: string;
  /** Namespace of the resource, when known. */
  readonly namespace?: string;
  /** Name of the resource, when the document names one. */
  readonly name?: string;
  /** API group (canonical when known) and version as written, for metric labels. */
  readonly group?: string;
  /** API version as written, for metric labels. */
  readonly version?: string;
  /** Why the document was refused. */
  readonly reason: RejectionReason;
  /** Each error as `file:line: field.path: message`. */
  readonly errors: readonly string[];
}

/** A suspicious but valid detail, or a duplicate resource; reported, never refused. */
export interface ConfigWarning {
  /** Path of the file, as given. */
  readonly file: string;
  /** 1-based line of the document the warning is about. */
  readonly line: number;
  /** Kind of the resource, when known. */
  readonly kind?: string;
  /** Namespace of the resource, when known. */
  readonly namespace?: string;
  /** Name of the resource, when known. */
  readonly name?: string;
  /** What is suspicious, ready to log. */
  readonly message: string;
}

/** Everything one read of one file produced. */
export interface FileLoad {
  readonly file: string;
  /** True when the file could not be read as YAML at all: nothing in it is trustworthy. */
  readonly unreadable: boolean;
  /** True when the file has no bytes at all: possibly caught between truncation and write. */
  readonly empty: boolean;
  readonly documents: readonly LoadedDocument[];
  readonly rejections: readonly DocumentRejection[];
  readonly warnings: readonly ConfigWarning[];
}

/**
 * Reads the resources of one config file's text: a stream of YAML (or JSON) documents, each a mesh resource
 * or a `List` of them. Every document is validated on its own; one bad document never hides the others.
 * A YAML syntax error anywhere makes the whole file `unreadable` (it may be half-written).
 */
export function loadConfigText(file: string, text: string, defaultNamespace: string): FileLoad {
  const tooDeep = flowNestingProblem(text);
  if (tooDeep) return unreadableFile(file, tooDeep.line, [nestingError(file, tooDeep)]);
  return loadStream(file, text, parseYamlDocuments(text), defaultNamespace);
}

/**
 * {@link loadConfigText} for the live source: the YAML is parsed a document at a time, other work running
 * between slices, so a large file never holds the event loop for long. Same result.
 */
export async function loadConfigTextSliced(
  file: string,
  text: string,
  defaultNamespace: string,
): Promise<FileLoad> {
  // A large file goes whole to the worker, whose loadConfigText runs the nesting check there.
  if (text.length >= OFF_THREAD_BYTES) {
    return loadConfigOffThread(
      { file, text, defaultNamespace },
      (r) => loadConfigText(r.file, r.text, r.defaultNamespace),
    );
  }
  const tooDeep = flowNestingProblem(text);
  if (tooDeep) return unreadableFile(file, tooDeep.line, [nestingError(file, tooDeep)]);
  return loadStreamSliced(
    loadStream,
    file,
    text,
    await parseYamlDocumentsSliced(text, DEFAULT_SLICE_MS),
    defaultNamespace,
  );
}

function loadStream(file: string, text: string, stream: YamlStream, defaultNamespace: string): FileLoad {
  if (stream.errors.length > 0) {
    return unreadableFile(
      file,
      stream.errors[0].line,
      capped(
        stream.errors.map((e) =>
          `${file}:${e.line}:${e.column}: YAML syntax error: ${e.message.slice(0, 200)}`
        ),
      ),
    );
  }
  const documents: LoadedDocument[] = [];
  const rejections: DocumentRejection[] = [];
  const warnings: ConfigWarning[] = [];
  for (const doc of stream.documents) {
    const slot = String(doc.index);
    if (isObject(doc.value) && doc.value.kind === "List" && isListApiVersion(doc.value.apiVersion)) {
      loadList(file, doc, slot, defaultNamespace, { documents, rejections, warnings });
      continue;
    }
    loadOne(file, doc, doc.value, "", slot, defaultNamespace, { documents, rejections, warnings });
  }
  return { file, unreadable: false, empty: text.length === 0, documents, rejections, warnings };
}

/** The load of a file that could not be read or parsed at all. */
export function unreadableFile(file: string, line: number, errors: readonly string[]): FileLoad {
  return {
    file,
    unreadable: true,
    empty: false,
    documents: [],
    rejections: [{ file, line, slot: "*", reason: "yaml_decode_error", errors }],
    warnings: [],
  };
}

interface Sink {
  readonly documents: LoadedDocument[];
  readonly rejections: DocumentRejection[];
  readonly warnings: ConfigWarning[];
}

function isListApiVersion(apiVersion: unknown): boolean {
  return apiVersion === undefined || apiVersion === "v1";
}

function loadList(file: string, doc: YamlDocument, slot: string, defaultNamespace: string, sink: Sink): void {
  const list = doc.value as Record<string, unknown>;
  const extra = Object.keys(list).filter((k) => !["apiVersion", "kind", "items", "metadata"].includes(k));
  if (!Array.isArray(list.items) || extra.length > 0) {
    const problem = !Array.isArray(list.items)
      ? "items: a List must have a list of resources in items"
      : `${extra[0]}: unknown field "${extra[0]}"; expected apiVersion, kind, metadata, items`;
    const at = doc.lineOf(Array.isArray(list.items) ? extra[0] : "items") ?? doc.line;
    sink.rejections.push({
      file,
      line: doc.line,
      slot,
      kind: "List",
      reason: "invalid_config",
      errors: [`${file}:${at}: ${problem}`],
    });
    return;
  }
  for (const [i, item] of list.items.entries()) {
    loadOne(file, doc, item, `items[${i}]`, `${slot}.items[${i}]`, defaultNamespace, sink);
  }
}

function loadOne(
  file: string,
  doc: YamlDocument,
  value: unknown,
  prefix: string,
  slot: string,
  defaultNamespace: string,
  sink: Sink,
): void {
  const line = doc.lineOf(prefix) ?? doc.line;
  const lineOf = (path: string) => doc.lineOf(joinFieldPath(prefix, path));
  const { resource, report } = parseResource(value, { file, line }, { defaultNamespace, lineOf });
  const id = identify(value, defaultNamespace);
  for (const warning of report.warnings) {
    sink.warnings.push({ file, line: warning.line ?? line, ...id.names, message: issueText(warning) });
  }
  if (resource) {
    const { kind } = resource.gvk;
    const key = resourceKey(kind, resource.meta.namespace, resource.meta.name);
    sink.documents.push({ key, resource, file, line, slot });
    return;
  }
  sink.rejections.push({
    file,
    line,
    slot,
    ...id.names,
    ...(id.key && { key: id.key }),
    ...(id.group !== undefined && { group: id.group }),
    ...(id.version !== undefined && { version: id.version }),
    reason: id.known ? "invalid_config" : "unknown_type",
    errors: capped(report.errors.map((issue) => `${file}:${issue.line ?? line}: ${issueText(issue)}`)),
  });
}

/** Most errors reported per document: a file that is not config at all must not be echoed line by line. */
const MAX_ERRORS_PER_DOCUMENT = 10;

function capped(errors: string[]): string[] {
  if (errors.length <= MAX_ERRORS_PER_DOCUMENT) return errors;
  const more = errors.length - MAX_ERRORS_PER_DOCUMENT;
  return [...errors.slice(0, MAX_ERRORS_PER_DOCUMENT), `… and ${more} more error${more === 1 ? "" : "s"}`];
}

function issueText(issue: Issue): string {
  return issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`;
}

interface Identity {
  readonly names: { kind?: string; namespace?: string; name?: string };
  readonly key?: string;
  readonly group?: string;
  readonly version?: string;
  /** True when apiVersion and kind name a registered kind. */
  readonly known: boolean;
}

/** What a (possibly invalid) document says it is, read leniently. */
function identify(value: unknown, defaultNamespace: string): Identity {
  if (!isObject(value)) return { names: {}, known: false };
  const kind = typeof value.kind === "string" && value.kind !== "" ? value.kind : undefined;
  const meta = isObject(value.metadata) ? value.metadata : {};
  const name = typeof meta.name === "string" && meta.name !== "" ? meta.name : undefined;
  const namespace = typeof meta.namespace === "string" && meta.namespace !== ""
    ? meta.namespace
    : defaultNamespace;
  const apiVersion = typeof value.apiVersion === "string" ? value.apiVersion : "";
  const slash = apiVersion.indexOf("/");
  const rawGroup = slash > 0 ? apiVersion.slice(0, slash) : undefined;
  const group = rawGroup === undefined ? undefined : canonicalGroup(rawGroup) ?? rawGroup;
  const version = slash > 0 ? apiVersion.slice(slash + 1) : undefined;
  const known = group !== undefined && kind !== undefined && findKind(group, kind) !== undefined;
  return {
    names: {
      ...(kind && { kind }),
      ...(kind && name && { namespace }),
      ...(name && { name }),
    },
    ...(kind && name && { key: resourceKey(kind, namespace, name) }),
    ...(group !== undefined && { group }),
    ...(version !== undefined && { version }),
    known,
  };
}
