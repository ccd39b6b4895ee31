/**
 * Reads an orchestrator object field by field against the shape the mesh expects, keeping what is valid and
 * noting the rest by path. The API server validates core objects, but the sender may be a broken or hostile
 * API server, a proxy in front of it, or a less trusted remote cluster's; and labels and annotations are
 * free-form strings anyone who can create the object sets. A field of the wrong type is ignored (as if absent)
 * and reported; `null` is JSON's absent and is not reported.
 *
 * @module
 */
import type { OrchMeta } from "./orch_objects.ts";

/** Problems noted per object at most; the rest are only counted, so a 10k-entry list costs one bounded line. */
export const MAX_PROBLEMS = 10;

/** A plain JSON object. */
export type Fields = Readonly<Record<string, unknown>>;

/** What reading an object found: the object as far as it is valid (absent: refused whole), and what was not. */
export interface Shaped<T> {
  readonly object?: T;
  /** `path: what was expected, and what came` for each part ignored, at most `MAX_PROBLEMS`. */
  readonly problems: readonly string[];
  /** Problems beyond those listed. */
  readonly more: number;
}

/** A value described for a problem line without quoting it whole (it may be megabytes). */
function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value).slice(0, 40)}`;
}

/** Field readers that note each problem with its path. */
export class ShapeReader {
  readonly problems: string[] = [];
  more = 0;

  /** Notes that `path` held `value` where `expected` was wanted. */
  wrong(path: string, expected: string, value: unknown): void {
    if (this.problems.length < MAX_PROBLEMS) {
      this.problems.push(`${path}: expected ${expected}, got ${describe(value)}`);
    } else this.more++;
  }

  /** The result: `object`, or refused when undefined. */
  done<T>(object: T | undefined): Shaped<T> {
    return { ...(object !== undefined && { object }), problems: this.problems, more: this.more };
  }

  /** The result of an object refused whole. */
  refused<T>(): Shaped<T> {
    return { problems: this.problems, more: this.more };
  }

  /** An object, or undefined (noted unless absent). */
  fields(value: unknown, path: string): Fields | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value === "object" && !Array.isArray(value)) return value as Fields;
    this.wrong(path, "an object", value);
    return undefined;
  }

  /** A list, or undefined (noted unless absent). */
  list(value: unknown, path: string): readonly unknown[] | undefined {
    if (value === undefined || value === null) return undefined;
    if (Array.isArray(value)) return value;
    this.wrong(path, "a list", value);
    return undefined;
  }

  /** A string, or undefined (noted unless absent). */
  string(value: unknown, path: string): string | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value === "string") return value;
    this.wrong(path, "a string", value);
    return undefined;
  }

  /** A boolean, or undefined (noted unless absent). */
  boolean(value: unknown, path: string): boolean | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value === "boolean") return value;
    this.wrong(path, "true or false", value);
    return undefined;
  }

  /** A port number (an integer from 1 to 65535), or undefined (noted unless absent). */
  port(value: unknown, path: string): number | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 65535) return value;
    this.wrong(path, "a port number from 1 to 65535", value);
    return undefined;
  }

  /** A list of strings; other entries are left out and noted. */
  strings(value: unknown, path: string): string[] | undefined {
    const items = this.list(value, path);
    if (items === undefined) return undefined;
    const out: string[] = [];
    items.forEach((item, i) => {
      const s = this.string(item, `${path}[${i}]`);
      if (s !== undefined) out.push(s);
      else if (item === null) this.wrong(`${path}[${i}]`, "a string", item);
    });
    return out;
  }

  /** A map of strings (labels, annotations, selectors); entries whose value is not a string are left out. */
  stringMap(value: unknown, path: string): Record<string, string> | undefined {
    const fields = this.fields(value, path);
    if (fields === undefined) return undefined;
    const out: Record<string, string> = {};
    for (const [key, item] of Object.entries(fields)) {
      if (typeof item === "string") out[key] = item;
      else this.wrong(`${path}[${JSON.stringify(key.slice(0, 60))}]`, "a string", item);
    }
    return out;
  }

  /** Each object of a list, with its path; other entries are left out and noted. */
  objects(value: unknown, path: string): { item: Fields; at: string }[] {
    const out: { item: Fields; at: string }[] = [];
    (this.list(value, path) ?? []).forEach((item, i) => {
      const at = `${path}[${i}]`;
      const fields = item === null ? undefined : this.fields(item, at);
      if (fields !== undefined) out.push({ item: fields, at });
      else if (item === null) this.wrong(at, "an object", item);
    });
    return out;
  }
}

/** A name or namespace the registry can key by: a non-empty string without `/`, at most 253 characters. */
function keyPart(value: unknown): value is string {
  return typeof value === "string" && value !== "" && value.length <= 253 && !value.includes("/");
}

/**
 * The metadata, or undefined when the object cannot be keyed (no usable name, or a namespace that is not
 * one): such an object is refused whole. `namespaced` objects without a namespace are in `default`'s place.
 */
export function readMeta(r: ShapeReader, value: unknown): OrchMeta | undefined {
  const meta = r.fields(value, "metadata");
  if (meta === undefined) {
    r.wrong("metadata", "an object", value);
    return undefined;
  }
  if (!keyPart(meta.name)) {
    r.wrong("metadata.name", "a non-empty name of at most 253 characters without '/'", meta.name);
    return undefined;
  }
  if (meta.namespace !== undefined && meta.namespace !== null && !keyPart(meta.namespace)) {
    r.wrong("metadata.namespace", "a non-empty name of at most 253 characters without '/'", meta.namespace);
    return undefined;
  }
  const labels = r.stringMap(meta.labels, "metadata.labels");
  const annotations = r.stringMap(meta.annotations, "metadata.annotations");
  const resourceVersion = r.string(meta.resourceVersion, "metadata.resourceVersion");
  const created = meta.creationTimestamp;
  const creationTimestamp = created instanceof Date
    ? created
    : r.string(created, "metadata.creationTimestamp");
  // Fields the mesh does not read (owner references, uid) stay for readers that lend the object on.
  const {
    namespace: _ns,
    labels: _l,
    annotations: _a,
    resourceVersion: _rv,
    creationTimestamp: _c,
    ...rest
  } = meta;
  return {
    ...rest,
    name: meta.name,
    ...(typeof meta.namespace === "string" && { namespace: meta.namespace }),
    ...(labels !== undefined && { labels }),
    ...(annotations !== undefined && { annotations }),
    ...(resourceVersion !== undefined && { resourceVersion }),
    ...(creationTimestamp !== undefined && { creationTimestamp }),
  };
}

/**
 * A reader for `raw`, `raw`'s fields (none when it is not an object) and its metadata; the metadata is
 * undefined when the object has no usable key, and is then refused (`r.refused()`).
 */
export function readTop(raw: unknown): { r: ShapeReader; o: Fields; metadata: OrchMeta | undefined } {
  const r = new ShapeReader();
  const o: Fields = r.fields(raw, "") ?? {};
  return { r, o, metadata: readMeta(r, o.metadata) };
}

/**
 * `raw` with each field of `read` replaced by its checked value, and removed where that is undefined (absent or
 * of the wrong shape); the fields the mesh does not read are kept as they came.
 */
export function overlay(raw: Fields, read: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...raw };
  for (const [key, value] of Object.entries(read)) {
    if (value === undefined) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** `{ [key]: value }` when `value` is defined, else nothing: for spreading optional fields. */
export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
