/**
 * Which derived results read which objects, both ways: a result files the keys it read at its last
 * computation, and a change to one object finds the results to recompute without a scan of all of them.
 *
 * @module
 */
import { addTo, removeFrom } from "../model/set_map.ts";

const NONE: ReadonlySet<string> = new Set();

/** Dependents (e.g. `ns/service`) by the keys they read (e.g. node names), and the reverse. */
export class DependencyIndex {
  readonly #byKey = new Map<string, Set<string>>();
  readonly #byDependent = new Map<string, ReadonlySet<string>>();

  /** Replaces what `dependent` reads with `keys`; an empty set forgets it. */
  set(dependent: string, keys: ReadonlySet<string>): void {
    const before = this.#byDependent.get(dependent) ?? NONE;
    for (const key of before) if (!keys.has(key)) removeFrom(this.#byKey, key, dependent);
    for (const key of keys) if (!before.has(key)) addTo(this.#byKey, key, dependent);
    if (keys.size > 0) this.#byDependent.set(dependent, keys);
    else this.#byDependent.delete(dependent);
  }

  /** The dependents that read `key`, as a copy (callers recompute them, which refiles them). */
  dependents(key: string): string[] {
    return [...this.#byKey.get(key) ?? NONE];
  }

  /** How many keys have dependents (for the index's own tests). */
  get keyCount(): number {
    return this.#byKey.size;
  }
}
