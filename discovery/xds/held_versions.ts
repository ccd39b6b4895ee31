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

/** Resource name → version held, as a shared list plus changes. */
export class HeldVersions {
  #base: readonly VersionedResource[] = [];
  #index: ReadonlyMap<string, VersionedResource> = new Map();
  /** Changes over the list: a version now held, or null for a listed resource no longer held. */
  #changes = new Map<string, string | null>();

  /**
   * Versions the proxy said it holds (`initial_resource_versions`); `memos` are the server's, where the names
   * of a shared list not in a lookup are worked out once per pair (both are shared by a shape's proxies).
   */
  constructor(private readonly memos: ListMemos, initial: Readonly<Record<string, string>> = {}) {
    for (const [name, version] of Object.entries(initial)) this.#changes.set(name, version);
  }

  /** The version held of `name`, if any. */
  get(name: string): string | undefined {
    const changed = this.#changes.get(name);
    if (changed !== undefined) return changed ?? undefined;
    return this.#index.get(name)?.version;
  }

  /** Whether some version of `name` is held. */
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** The proxy now holds `version` of `name`. */
  set(name: string, version: string): void {
    this.#changes.set(name, version);
  }

  /** The proxy no longer holds `name`; true when it did. */
  delete(name: string): boolean {
    const held = this.has(name);
    if (this.#index.has(name)) this.#changes.set(name, null);
    else this.#changes.delete(name);
    return held;
  }

  /** The proxy now holds exactly `list` (kept by reference: never modified). */
  holdExactly(list: readonly VersionedResource[]): void {
    this.#base = list;
    this.#index = this.memos.indexByName(list);
    this.#changes = new Map();
  }

  /** True when the proxy holds exactly `list`, known without looking at its resources. */
  holdsExactly(list: readonly VersionedResource[]): boolean {
    return this.#base === list && this.#changes.size === 0;
  }

  /**
   * The resources of `resources` whose version the proxy does not hold: `resources` itself when that is all
   * of them. A resource that is the very object held is unchanged without comparing versions.
   */
  changedIn(resources: readonly VersionedResource[]): readonly VersionedResource[] {
    if (this.holdsExactly(resources)) return [];
    // Nothing held (a first answer): all of them, without a lookup per resource.
    if (this.#base.length === 0 && this.#changes.size === 0) return resources;
    const out: VersionedResource[] = [];
    for (const resource of resources) {
      const changed = this.#changes.get(resource.name);
      if (changed === undefined) {
        const held = this.#index.get(resource.name);
        if (held === resource || (held !== undefined && held.version === resource.version)) continue;
      } else if (changed === resource.version) continue;
      out.push(resource);
    }
    return out.length === resources.length ? resources : out;
  }

  /** The names held that are not in `present`. */
  namesNotIn(present: NameLookup): readonly string[] {
    if (this.#changes.size === 0) return this.memos.resourcesNotIn(this.#base, present);
    const out: string[] = [];
    for (const resource of this.#base) {
      if (!present.has(resource.name) && !this.#changes.has(resource.name)) out.push(resource.name);
    }
    for (const [name, version] of this.#changes) {
      if (version !== null && !present.has(name)) out.push(name);
    }
    return out;
  }

  /** The names held. */
  *names(): IterableIterator<string> {
    for (const resource of this.#base) {
      if (!this.#changes.has(resource.name)) yield resource.name;
    }
    for (const [name, version] of this.#changes) if (version !== null) yield name;
  }
}
