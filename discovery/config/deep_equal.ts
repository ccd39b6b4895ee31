/**
 * Structural equality of JSON-like values (plain objects, arrays, primitives, bigints). A property whose value
 * is `undefined` counts as absent. Walks with plain loops: the store compares every resource of a config tree
 * on a reload, and the arrays and closures of `Object.keys(...).every(...)` were most of what a reload allocated.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const aIsArray = Array.isArray(a);
  if (aIsArray !== Array.isArray(b)) return false;
  if (aIsArray) {
    const left = a as unknown[];
    const right = b as unknown[];
    if (left.length !== right.length) return false;
    for (let i = 0; i < left.length; i++) {
      if (!deepEqual(left[i], right[i])) return false;
    }
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let defined = 0;
  for (const key in left) {
    if (!Object.hasOwn(left, key) || left[key] === undefined) continue;
    if (!Object.hasOwn(right, key) || !deepEqual(left[key], right[key])) return false;
    defined++;
  }
  for (const key in right) {
    if (Object.hasOwn(right, key) && right[key] !== undefined) defined--;
  }
  return defined === 0;
}
