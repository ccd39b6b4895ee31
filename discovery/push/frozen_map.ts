/**
 * A Map that refuses every change once built: `Object.freeze` leaves a Map's entries writable, and a snapshot's
 * maps must stay as published.
 */
export class FrozenMap<K, V> extends Map<K, V> {
  /** A map of `entries`, frozen. */
  constructor(entries: Iterable<readonly [K, V]> = []) {
    super();
    for (const [key, value] of entries) super.set(key, value);
    Object.freeze(this);
  }

  /** @throws {TypeError} always: the map is frozen */
  override set(key: K, _value: V): this {
    throw new TypeError(`Cannot set "${String(key)}": the map is frozen`);
  }

  /** @throws {TypeError} always: the map is frozen */
  override delete(key: K): boolean {
    throw new TypeError(`Cannot delete "${String(key)}": the map is frozen`);
  }

  /** @throws {TypeError} always: the map is frozen */
  override clear(): void {
    throw new TypeError("Cannot clear the map: it is frozen");
  }
}
