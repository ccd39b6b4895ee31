/**
 * The JSON patch (RFC 6902) an injection answers with, and its application. The patch sets each field of
 * `metadata` and `spec` (and any other top-level field) that injection changed, whole: small enough for a pod,
 * and the API server applies it as a unit.
 * @module
 */

import { isObject as isObj } from "../../shared/config/validation/fields.ts";
type Obj = Record<string, unknown>;

/** One JSON patch operation. */
export interface JsonPatchOperation {
  readonly op: "add" | "remove" | "replace";
  readonly path: string;
  readonly value?: unknown;
}

const pointer = (...keys: string[]) =>
  keys.map((k) => `/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The operations that turn `before` into `after`, one per changed field of `metadata`, `spec` and the top. */
export function createPodPatch(before: Readonly<Obj>, after: Readonly<Obj>): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [b, a] = [before[key], after[key]];
    if (same(a, b)) continue;
    if (a === undefined) ops.push({ op: "remove", path: pointer(key) });
    else if ((key === "metadata" || key === "spec") && isObj(a) && isObj(b)) {
      for (const field of new Set([...Object.keys(b), ...Object.keys(a)])) {
        if (same(a[field], b[field])) continue;
        if (a[field] === undefined) ops.push({ op: "remove", path: pointer(key, field) });
        else ops.push({ op: "add", path: pointer(key, field), value: a[field] });
      }
    } else ops.push({ op: "add", path: pointer(key), value: a });
  }
  return ops;
}

/**
 * `document` with `ops` applied (add, remove, replace); `document` is not changed.
 *
 * @throws {RangeError} naming the path when an operation's parent does not exist
 */
export function applyJsonPatch(document: unknown, ops: readonly JsonPatchOperation[]): unknown {
  const root = { doc: structuredClone(document) } as Obj;
  for (const op of ops) {
    const keys = [
      "doc",
      ...op.path.split("/").slice(1).map((k) => k.replaceAll("~1", "/").replaceAll("~0", "~")),
    ];
    const last = keys.pop()!;
    let parent: unknown = root;
    for (const key of keys) {
      parent = (parent as Obj | undefined)?.[Array.isArray(parent) && key === "-" ? "" : key];
    }
    if (typeof parent !== "object" || parent === null) {
      throw new RangeError(`JSON patch path "${op.path}" has no parent`);
    }
    if (Array.isArray(parent)) {
      const at = last === "-" ? parent.length : Number(last);
      if (op.op === "remove") parent.splice(at, 1);
      else if (op.op === "replace") parent[at] = structuredClone(op.value);
      else parent.splice(at, 0, structuredClone(op.value));
    } else if (op.op === "remove") delete (parent as Obj)[last];
    else (parent as Obj)[last] = structuredClone(op.value);
  }
  return root.doc;
}
