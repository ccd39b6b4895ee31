/**
 * What a proxy holds of one type, as `/debug/config_dump` shows it. A state-of-the-world response is usually
 * the whole set, and proxies of one shape are sent the very same list: the record keeps that list as it is
 * (shared, never copied) and only the changes since (endpoint-only pushes, delta updates) in a map of its
 * own. A thousand full-view proxies then hold one list per shape instead of a map of 8000 entries each.
 *
 * @module
 */
import type { ListMemos } from "./list_memos.ts";
import { SharedListChanges } from "./shared_list_changes.ts";
import { sameResource, type VersionedResource } from "./versioned_resource.ts";

const NONE: readonly VersionedResource[] = Object.freeze([]);

/** The resources one proxy holds of one type. */
export class SentRecord {
  /** The list as sent (shared with other records and the shape memo), plus what was sent or dropped since. */
  readonly #held: SharedListChanges<
    VersionedResource,
    VersionedResource,
    ReadonlyMap<string, VersionedResource>
  >;
  /** The name list the record was last narrowed to; narrowing to the very same list again changes nothing. */
  #narrowedTo: readonly string[] | undefined;

  /** `memos` are the server's: whether a generation is a sent list is worked out once per pair of lists. */
  constructor(private readonly memos: ListMemos) {
    this.#held = new SharedListChanges(NONE, memos.indexLookup);
  }

  /**
   * The proxy now holds exactly `resources` (kept by reference: the caller must not modify it); `names`, when
   * given, is a list of exactly their names.
   */
  replace(resources: readonly VersionedResource[], names?: readonly string[]): void {
    this.#held.reset(resources);
    this.#narrowedTo = names;
  }

  /** The proxy now also holds `resource` (replacing one of the same name). */
  set(resource: VersionedResource): void {
    this.#held.set(resource.name, resource);
  }

  /** The proxy no longer holds `name`. */
  delete(name: string): void {
    this.#held.drop(name);
  }

  /**
   * Keeps only the names in `keep` (a list never modified). Only resources for watched names are ever added,
   * so a record already narrowed to this very list is left as it is: an endpoint push to a proxy watching
   * 3000 names does not rebuild its record.
   */
  retain(keep: readonly string[]): void {
    if (this.#narrowedTo === keep) return;
    const names = new Set(keep);
    this.replace([...this.toMap().values()].filter((r) => names.has(r.name)), keep);
  }

  /**
   * True when the proxy holds exactly `resources`: the same names, each the very object sent or one with the
   * same bytes; in the order sent when nothing was layered over the list since, in any order otherwise.
   * Endpoint updates layered over a list count, so a full push after them can tell that nothing changed.
   */
  holdsExactly(resources: readonly VersionedResource[]): boolean {
    const held = this.#held;
    if (held.unchanged) return held.base === resources || this.memos.holds(held.base, resources);
    if (held.size !== resources.length) return false;
    const index = held.lookup;
    for (const resource of resources) {
      const changed = held.changed(resource.name);
      const mine = changed === undefined ? index.get(resource.name) : changed;
      if (mine === undefined || mine === null || !sameResource(mine, resource)) return false;
    }
    return true;
  }

  /**
   * Adds every resource the record keeps to `held` (a list replaced by later changes included: the record
   * still keeps it). A list in `lists` was added already, by a record sharing it, and is skipped.
   */
  collectHeld(held: Set<VersionedResource>, lists: Set<readonly VersionedResource[]>): void {
    const base = this.#held.base;
    if (!lists.has(base)) {
      lists.add(base);
      for (const resource of base) held.add(resource);
    }
    for (const resource of this.#held.changes.values()) if (resource !== null) held.add(resource);
  }

  /** The resources held, by name (a new map; base first, then the changes in the order they came). */
  toMap(): Map<string, VersionedResource> {
    const out = new Map<string, VersionedResource>();
    for (const resource of this.#held.base) out.set(resource.name, resource);
    for (const [name, resource] of this.#held.changes) {
      if (resource === null) out.delete(name);
      else out.set(name, resource);
    }
    return out;
  }
}
