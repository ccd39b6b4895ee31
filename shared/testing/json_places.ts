/**
 * Test support: the places of a decoded JSON value and copies of it with one place replaced, for fuzz tests
 * that mutate realistic documents part by part.
 *
 * @module
 */

/** A place in a JSON value: object keys and list indexes from the root. */
export type JsonPath = readonly (string | number)[];

/** Every place in `value`, the root (`[]`) first, then depth first in key and index order. */
export function placesOf(value: unknown, at: JsonPath = [], out: JsonPath[] = []): JsonPath[] {
  out.push(at);
  if (Array.isArray(value)) value.forEach((item, i) => placesOf(item, [...at, i], out));
  else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) placesOf(item, [...at, key], out);
  }
  return out;
}

/** A copy of `value` with the value at `at` replaced by `replacement`; `value` itself is left as it was. */
export function replacedAt(value: unknown, at: JsonPath, replacement: unknown): unknown {
  if (at.length === 0) return replacement;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<
    string | number,
    unknown
  >;
  copy[at[0]] = replacedAt(copy[at[0]], at.slice(1), replacement);
  return copy;
}
