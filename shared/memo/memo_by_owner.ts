/**
 * Memoisation for values derived from an immutable owner object (a snapshot, a scope, a service) and a key:
 * kept per owner by identity, forgotten with it.
 *
 * @module
 */

/**
 * A memo of values by owner and key: `(owner, key, compute)` returns the value remembered for the pair, or
 * what `compute()` gives the first time. The owner must not change after the first call.
 */
export function memoByOwner<O extends object, K, V>(): (owner: O, key: K, compute: () => V) => V {
  const byOwner = new WeakMap<O, Map<K, V>>();
  return (owner, key, compute) => {
    let values = byOwner.get(owner);
    if (values === undefined) byOwner.set(owner, values = new Map());
    // One lookup on the hot path; `has` only tells a remembered undefined from a missing entry.
    const known = values.get(key);
    if (known !== undefined || values.has(key)) return known as V;
    const value = compute();
    values.set(key, value);
    return value;
  };
}
