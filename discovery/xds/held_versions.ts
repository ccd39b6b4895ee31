/**
 * The resource versions an incremental (delta) proxy holds of one type. Most answers send a proxy a shape's
 * whole list, so the record keeps that list as it is (shared with every proxy of the shape, its name index
 * built once per list) and only later changes in a map of its own: a thousand full-view proxies held four
 * million map entries, written one by one on every first answer.
 *
 * @module
 */
import type { NameLookup, VersionedResource } from "./versioned_resource.ts";
import type { ListMemos } from "./list_memos.ts";
import { SharedListChanges } from "./shared_list_changes.ts";

const NONE: readonly VersionedResource[] = Object.freeze([]);
const nameOf = (resource: VersionedResource) => resource.name;

/** Resource name → version held, as a shared list plus changes. */
export class HeldVersions {
  /** The list last sent whole, plus the versions held since (null: a listed resource no longer held). */
  readonly #held: SharedListChanges<VersionedResource, string, ReadonlyMap<string, VersionedResource>>;

  /**
   * Versions the proxy said it holds (`initial_resource_versions`); `memos` are the server's, where the names
   * of a shared list not in a lookup are worked out once per pair (both are shared by a shape's proxies).
   */
  constructor(private readonly memos: ListMemos, initial: Readonly<Record<string, string>> = {}) {
    this.#held = new SharedListChanges(NONE, memos.indexLookup);
    for (const [name, version] of Object.entries(initial)) this.#held.set(name, version);
  }

  /** The version held of `name`, if any. */
  get(name: string): string | undefined {
    const changed = this.#held.changed(name);
    if (changed !== undefined) return changed ?? undefined;
    return this.#held.lookup.get(name)?.version;
  }

  /** Whether some version of `name` is held. */
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** The proxy now holds `version` of `name`. */
  set(name: string, version: string): void {
    this.#held.set(name, version);
  }

  /** The proxy no longer holds `name`; true when it did. */
  delete(name: string): boolean {
    const held = this.has(name);
    this.#held.drop(name);
    return held;
  }

  /** The proxy now holds exactly `list` (kept by reference: never modified). */
  holdExactly(list: readonly VersionedResource[]): void {
    this.#held.reset(list);
  }

  /** True when the proxy holds exactly `list`, known without looking at its resources. */
  holdsExactly(list: readonly VersionedResource[]): boolean {
    return this.#held.base === list && this.#held.unchanged;
  }

  /**
   * The resources of `resources` whose version the proxy does not hold: `resources` itself when that is all
   * of them. A resource that is the very object held is unchanged without comparing versions.
   */
  changedIn(resources: readonly VersionedResource[]): readonly VersionedResource[] {
    if (this.holdsExactly(resources)) return [];
    // Nothing held (a first answer): all of them, without a lookup per resource.
    if (this.#held.base.length === 0 && this.#held.unchanged) return resources;
    const index = this.#held.lookup;
    const out: VersionedResource[] = [];
    for (const resource of resources) {
      const changed = this.#held.changed(resource.name);
      if (changed === undefined) {
        const held = index.get(resource.name);
        if (held === resource || (held !== undefined && held.version === resource.version)) continue;
      } else if (changed === resource.version) continue;
      out.push(resource);
    }
    return out.length === resources.length ? resources : out;
  }

  /** The names held that are not in `present`. */
  namesNotIn(present: NameLookup): readonly string[] {
    if (this.#held.unchanged) return this.memos.resourcesNotIn(this.#held.base, present);
    return [...this.names()].filter((name) => !present.has(name));
  }

  /** The names held: the list's first, in its order, then the ones set since. */
  names(): IterableIterator<string> {
    return this.#held.names(nameOf);
  }
}
