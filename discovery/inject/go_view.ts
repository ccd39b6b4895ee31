/**
 * Orchestrator objects as the reference's templates see them: Go structs (`.ObjectMeta.Labels`,
 * `.Spec.Containers`, `$c.Ports`) over the JSON this webhook receives. A field the JSON lacks reads as Go's zero
 * value; a label or annotation map reads a missing key as `""`, as Go's `map[string]string` does.
 * @module
 */

/** Go's field name for a JSON field: `APIVersion` → `apiVersion`, `HostIP` → `hostIP`, `Name` → `name`. */
export function jsonFieldName(goName: string): string {
  const run = /^[A-Z]+/.exec(goName)?.[0] ?? "";
  if (run.length <= 1 || run.length === goName.length) {
    return goName.slice(0, run.length).toLowerCase() + goName.slice(run.length);
  }
  const keep = /[a-z]/.test(goName[run.length] ?? "") ? run.length - 1 : run.length;
  return goName.slice(0, keep).toLowerCase() + goName.slice(keep);
}

/** Fields whose Go type is `map[string]string`. */
const STRING_MAPS = new Set(["Labels", "Annotations", "NodeSelector"]);

/** A `map[string]string`: a missing key reads as `""`; ranges and JSON see only the keys that are there. */
export function stringMap(map: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return new Proxy({ ...(map ?? {}) }, {
    get: (target, key) =>
      typeof key !== "string" || key === "toJSON" || Object.hasOwn(target, key)
        ? Reflect.get(target, key)
        : "",
  });
}

/**
 * A Go-struct view of a JSON object: capitalised names read the JSON field, a missing one reads as `""` (or an
 * empty string map), nested objects and lists of objects are views too; `JSON.stringify` writes the JSON as is.
 * `extra` holds fields (or methods) that take precedence.
 */
export function goView(json: unknown, extra: Readonly<Record<PropertyKey, unknown>> = {}): unknown {
  if (Array.isArray(json)) return json.map((item) => goView(item));
  if (typeof json !== "object" || json === null) return json;
  const raw = json as Record<string, unknown>;
  return new Proxy(raw, {
    get(target, key) {
      if (Object.hasOwn(extra, key)) return (extra as Record<PropertyKey, unknown>)[key];
      if (typeof key !== "string") return Reflect.get(target, key);
      if (key === "toJSON") return () => target;
      if (!/^[A-Z]/.test(key)) return undefined;
      const value = target[jsonFieldName(key)];
      if (STRING_MAPS.has(key)) return stringMap(value as Record<string, string> | undefined);
      if (value === undefined || value === null) return "";
      return goView(value);
    },
  });
}
