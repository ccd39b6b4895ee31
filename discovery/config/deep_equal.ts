/** Structural equality of JSON-like values (plain objects, arrays, primitives, bigints). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => deepEqual(item, other[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = Object.keys(ra).filter((k) => ra[k] !== undefined);
  const otherKeys = Object.keys(rb).filter((k) => rb[k] !== undefined);
  return keys.length === otherKeys.length &&
    keys.every((k) => Object.hasOwn(rb, k) && deepEqual(ra[k], rb[k]));
}
