/**
 * Indexes kept as a map of sets, where an empty set is never left behind: a set of keys can grow with input,
 * so a key whose last value went must go too.
 *
 * @module
 */

/** Adds `value` to the set at `key`, making the set when it is the first. */
export function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (set) set.add(value);
  else map.set(key, new Set([value]));
}

/** Removes `value` from the set at `key`; true when the set became empty (and was dropped). */
export function removeFrom<K, V>(map: Map<K, Set<V>>, key: K, value: V): boolean {
  const set = map.get(key);
  if (!set) return false;
  set.delete(value);
  if (set.size > 0) return false;
  map.delete(key);
  return true;
}
