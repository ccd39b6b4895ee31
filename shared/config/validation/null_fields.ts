/**
 * The unset fields of a decoded spec left out. In Istio's API a field whose value is null is unset (the protobuf
 * JSON mapping), which is how YAML writes `field:` with nothing after it; the validators accept it as absent.
 * What reads a typed spec tells an unset field by `undefined` alone, so the spec the store gets has no null field.
 *
 * @module
 */

/** A path into a spec: field names and list indexes. */
export type SpecPath = readonly (string | number)[];

/**
 * `value` with every object field whose value is null removed, at any depth; list items are kept (a validator
 * refuses a null item). A field for which `holdsStruct` is true is kept whole: it is a `google.protobuf.Struct`,
 * where null is a value. Returns `value` itself when it has no null field.
 */
export function withoutNullFields(
  value: unknown,
  holdsStruct: (path: SpecPath) => boolean = () => false,
  path: SpecPath = [],
): unknown {
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = withoutNullFields(item, holdsStruct, [...path, i]);
      if (next !== item) (copy ??= [...value])[i] = next;
    });
    return copy ?? value;
  }
  if (value === null || typeof value !== "object") return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = [...path, key];
    if (holdsStruct(at)) continue;
    if (item === null) {
      copy ??= { ...value };
      delete copy[key];
      continue;
    }
    const next = withoutNullFields(item, holdsStruct, at);
    if (next !== item) (copy ??= { ...value })[key] = next;
  }
  return copy ?? value;
}
