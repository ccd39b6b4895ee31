import type { ConfigWarning, DocumentRejection, FileLoad, LoadedDocument } from "./config_file_load.ts";
import { addTo, removeFrom } from "../model/set_map.ts";

/** The effective content of a config directory: one winning document per resource, and what was refused. */
export interface ConfigDirView {
  /** Winning document per `kind/namespace/name`. */
  readonly resources: ReadonlyMap<string, LoadedDocument>;
  /** Current rejections, sorted by file and line. */
  readonly rejections: readonly DocumentRejection[];
  /** Current warnings (validation warnings, duplicates, stale versions kept), sorted by file and line. */
  readonly warnings: readonly ConfigWarning[];
}

/**
 * What each file of a config directory contributes, with the recovery rules of the file source:
 * - a file that cannot be parsed (half-written, syntax error) keeps contributing what it did before, and
 *   so does a file that became zero bytes long (an in-place write caught between truncation and write:
 *   delete the file to remove its resources);
 * - a rejected document keeps contributing the last good version of the resource it names (or, when it
 *   names none, of the resource its slot in the file held), so a typo never removes a route;
 * - the same resource in several places resolves to the first by file name, then line; the rest are warned.
 */
export class ConfigDirState {
  /** Per file: the documents it contributes now (valid ones plus last good versions kept). */
  readonly #accepted = new Map<string, readonly LoadedDocument[]>();
  /** Per file: documents kept from an earlier read because their current version was rejected. */
  readonly #kept = new Map<string, readonly LoadedDocument[]>();
  readonly #loads = new Map<string, FileLoad>();
  /**
   * Per resource key: the documents of every file's `#accepted` that name it, so a winner query reads only
   * the candidates for that key, never the documents of every other file.
   */
  readonly #byKey = new Map<string, Set<LoadedDocument>>();
  /** Keys a file contributed before or after an update or removal since {@link takeTouched} was last called. */
  #touched = new Set<string>();

  /** Records a new read of a file. */
  update(load: FileLoad): void {
    const previous = this.#accepted.get(load.file) ?? [];
    for (const doc of previous) this.#touched.add(doc.key);
    this.#loads.set(load.file, load);
    if (load.unreadable || (load.empty && previous.length > 0)) {
      this.#kept.set(load.file, previous);
      this.#accepted.set(load.file, previous);
      return;
    }
    for (const doc of load.documents) this.#touched.add(doc.key);
    const accepted = [...load.documents];
    const kept: LoadedDocument[] = [];
    const keys = new Set(accepted.map((d) => d.key));
    for (const rejection of load.rejections) {
      const last = rejection.key !== undefined
        ? previous.find((d) => d.key === rejection.key)
        : previous.find((d) => d.slot === rejection.slot && !keys.has(d.key));
      if (last === undefined || keys.has(last.key)) continue;
      keys.add(last.key);
      accepted.push(last);
      kept.push(last);
    }
    this.#setAccepted(load.file, accepted);
    this.#kept.set(load.file, kept);
  }

  /** Forgets a file that no longer exists: its resources go away. */
  remove(file: string): void {
    for (const doc of this.#accepted.get(file) ?? []) this.#touched.add(doc.key);
    this.#setAccepted(file, undefined);
    this.#kept.delete(file);
    this.#loads.delete(file);
  }

  /**
   * The resource keys whose winner may have changed since the last call: every key a file updated or removed
   * since then contributed before or after. Keys of files left alone keep their winner.
   */
  takeTouched(): ReadonlySet<string> {
    const touched = this.#touched;
    this.#touched = new Set();
    return touched;
  }

  /** The document that wins `key` now (the first by file name, then line), if any file defines it. */
  winner(key: string): LoadedDocument | undefined {
    let best: LoadedDocument | undefined;
    for (const doc of this.#byKey.get(key) ?? []) {
      if (best === undefined || comparePositions(doc, best) < 0) best = doc;
    }
    return best;
  }

  /** Replaces what `file` contributes (none when `docs` is undefined), in the per-key index too. */
  #setAccepted(file: string, docs: readonly LoadedDocument[] | undefined): void {
    for (const doc of this.#accepted.get(file) ?? []) removeFrom(this.#byKey, doc.key, doc);
    if (docs === undefined) {
      this.#accepted.delete(file);
      return;
    }
    this.#accepted.set(file, docs);
    for (const doc of docs) addTo(this.#byKey, doc.key, doc);
  }

  /** Files currently known, sorted. */
  files(): string[] {
    return [...this.#loads.keys()].sort();
  }

  /** The effective resources, rejections and warnings. */
  view(): ConfigDirView {
    const resources = new Map<string, LoadedDocument>();
    const warnings: ConfigWarning[] = [];
    for (const key of [...this.#byKey.keys()].sort()) {
      const [winner, ...losers] = [...this.#byKey.get(key)!].sort(comparePositions);
      resources.set(key, winner);
      for (const loser of losers) {
        warnings.push({
          file: loser.file,
          line: loser.line,
          ...names(loser),
          message:
            `duplicate ${describe(loser)} ignored; ${winner.file}:${winner.line} defines it too and wins ` +
            "(the first by file name, then line)",
        });
      }
    }
    const rejections: DocumentRejection[] = [];
    for (const load of this.#loads.values()) {
      rejections.push(...load.rejections);
      warnings.push(...load.warnings);
    }
    for (const [file, kept] of this.#kept) {
      const load = this.#loads.get(file);
      for (const doc of kept) {
        warnings.push({
          file: doc.file,
          line: doc.line,
          ...names(doc),
          message: load?.unreadable
            ? `${file} cannot be parsed; still serving ${describe(doc)} as last loaded from it`
            : load?.empty
            ? `${file} is empty; still serving ${
              describe(doc)
            } as last loaded from it (delete the file to remove it)`
            : `the new version of ${describe(doc)} was rejected; still serving its last good version`,
        });
      }
    }
    return {
      resources,
      rejections: rejections.sort(comparePositions),
      warnings: warnings.sort(comparePositions),
    };
  }
}

function comparePositions(a: { file: string; line: number }, b: { file: string; line: number }): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  return a.line - b.line;
}

function names(doc: LoadedDocument): { kind: string; namespace: string; name: string } {
  const { gvk, meta } = doc.resource;
  return { kind: gvk.kind, namespace: meta.namespace, name: meta.name };
}

function describe(doc: LoadedDocument): string {
  const { gvk, meta } = doc.resource;
  return `${gvk.kind} ${meta.namespace}/${meta.name}`;
}
