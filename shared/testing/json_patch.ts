/**
 * Test support: RFC 6902 JSON patches applied as the orchestrator's API server applies an admission webhook's
 * answer (`add`, `remove`, `replace`). Only tests import this file.
 * @module
 */

type Obj = Record<string, unknown>;

/** One JSON patch operation. */
export interface JsonPatchOp {
  readonly op: string;
  readonly path: string;
  readonly value?: unknown;
}

/**
 * `document` with `ops` applied (add, remove, replace); `document` is not changed.
 *
 * @throws {RangeError} naming the path when an operation's parent does not exist
 */
export function applyJsonPatch(document: unknown, ops: readonly JsonPatchOp[]): unknown {
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
    if (!["add", "remove", "replace"].includes(op.op)) {
      throw new RangeError(
        `JSON patch operation "${op.op}" at "${op.path}" is not supported: expected add, remove or replace`,
      );
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
