/**
 * The strategic merge patch the reference uses to lay a rendered template (and a user's own sidecar
 * containers) over a pod: maps merge key by key, `null` removes a key, lists of objects with a merge key
 * (containers, volumes, env, mounts, ports, pull secrets) merge item by item, and every other list is
 * replaced; `$patch: replace` in a map replaces the original map. A merged list is ordered as the orchestrator's patch code orders it: the patch's items in patch
 * order, with the items only the original has woven in, each before a patch item it preceded in the original.
 * @module
 */

import { isObject as isObj } from "@mesh/shared/config/validation/fields";
type Obj = Record<string, unknown>;

/** The merge key of the pod's lists, by field name (the same in every place a Pod has them). */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: "name",
  initContainers: "name",
  ephemeralContainers: "name",
  volumes: "name",
  imagePullSecrets: "name",
  env: "name",
  volumeMounts: "mountPath",
  ports: "containerPort",
  ownerReferences: "uid",
};

/** `patch` merged over `original` (neither is changed); `field` is the name `original` has in its parent. */
export function strategicMerge(original: unknown, patch: unknown, field = ""): unknown {
  if (isObj(patch)) {
    // The `$patch: replace` directive: the patch's map replaces the original's.
    if (patch.$patch === "replace") {
      const { $patch: _, ...rest } = patch;
      return strategicMerge(undefined, rest, field);
    }
    const out: Obj = isObj(original) ? { ...original } : {};
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete out[key];
      else out[key] = strategicMerge(out[key], value, key);
    }
    return out;
  }
  const mergeKey = MERGE_KEYS[field];
  if (Array.isArray(patch) && mergeKey !== undefined && Array.isArray(original)) {
    const keyOf = (item: unknown) => (isObj(item) ? item[mergeKey] : undefined);
    const serverAt = (item: unknown) =>
      original.findIndex((o) => keyOf(o) !== undefined && keyOf(o) === keyOf(item));
    const patched = patch.map((item) => {
      const at = serverAt(item);
      return strategicMerge(at >= 0 ? original[at] : undefined, item, "");
    });
    const serverOnly = original.filter((o) =>
      !patch.some((p) => keyOf(p) !== undefined && keyOf(p) === keyOf(o))
    );
    const out: unknown[] = [];
    let i = 0;
    let j = 0;
    while (i < serverOnly.length || j < patched.length) {
      if (j >= patched.length) out.push(serverOnly[i++]);
      else if (i >= serverOnly.length) out.push(patched[j++]);
      else {
        const [left, right] = [serverAt(serverOnly[i]), serverAt(patched[j])];
        out.push(left >= 0 && right >= 0 && left < right ? serverOnly[i++] : patched[j++]);
      }
    }
    return out;
  }
  if (Array.isArray(patch)) return patch.map((item) => strategicMerge(undefined, item, ""));
  return patch;
}
