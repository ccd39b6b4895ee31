/**
 * The JSON patch (RFC 6902) an injection answers with. The patch sets each field of `metadata` and `spec` (and
 * any other top-level field) that injection changed, whole: small enough for a pod, and the API server applies
 * it as a unit (tests apply it with `shared/testing/json_patch.ts`).
 * @module
 */

import { isObject as isObj } from "@mesh/shared/config/validation/fields";
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
