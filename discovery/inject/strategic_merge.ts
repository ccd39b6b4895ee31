/**
 * The strategic merge patch the reference uses to lay a rendered template (and a user's own sidecar
 * containers) over a pod: maps merge key by key, `null` removes a key, lists of objects with a merge key
 * (containers, volumes, env, mounts, ports, pull secrets) merge item by item in place with new items
 * appended, and every other list is replaced.
 * @module
 */

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

const isObj = (value: unknown): value is Obj =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `patch` merged over `original` (neither is changed); `field` is the name `original` has in its parent. */
export function strategicMerge(original: unknown, patch: unknown, field = ""): unknown {
  if (isObj(patch)) {
    const out: Obj = isObj(original) ? { ...original } : {};
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete out[key];
      else out[key] = strategicMerge(out[key], value, key);
    }
    return out;
  }
  const mergeKey = MERGE_KEYS[field];
  if (Array.isArray(patch) && mergeKey !== undefined && Array.isArray(original)) {
    const out = [...original];
    for (const item of patch) {
      const at = isObj(item) ? out.findIndex((o) => isObj(o) && o[mergeKey] === item[mergeKey]) : -1;
      if (at >= 0) out[at] = strategicMerge(out[at], item, "");
      else out.push(strategicMerge(undefined, item, ""));
    }
    return out;
  }
  if (Array.isArray(patch)) return patch.map((item) => strategicMerge(undefined, item, ""));
  return patch;
}
