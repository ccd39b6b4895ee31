/**
 * Per-object memoisation for values derived from immutable objects (frozen lists, snapshots, scopes): the
 * value is computed once per object and forgotten with it.
 *
 * @module
 */

/**
 * `compute`, remembered per argument by identity in a WeakMap. The argument must not change after the first
 * call: the value is never computed again for it.
 */
export function memoByIdentity<K extends object, V>(compute: (key: K) => V): (key: K) => V {
  const values = new WeakMap<K, V>();
  return (key) => {
    // One lookup on the hot path; `has` only tells a remembered undefined from a missing entry.
    const known = values.get(key);
    if (known !== undefined || values.has(key)) return known as V;
    const value = compute(key);
    values.set(key, value);
    return value;
  };
}
