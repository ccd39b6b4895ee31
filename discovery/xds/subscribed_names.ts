/**
 * The names an incremental (delta) proxy subscribed of one type. A first subscription is usually a shared
 * list (`NameListTable`: every full-view proxy subscribes the same 3000 names), so the record keeps that list
 * as it is, its set built once per list, and only later changes apart: a thousand proxies copying 4000 names
 * each into sets of their own were most of what a delta connect cost beyond its bytes.
 *
 * @module
 */
import type { ListMemos } from "./list_memos.ts";
import { SharedListChanges } from "./shared_list_changes.ts";
import type { NameLookup } from "./versioned_resource.ts";

const EMPTY: readonly string[] = Object.freeze([]);
const itself = (name: string) => name;

/** Subscribed names, as a shared list plus changes. */
export class SubscribedNames {
  /** The list first subscribed, plus names subscribed since (true) and listed names unsubscribed (null). */
  readonly #names: SharedListChanges<string, true, ReadonlySet<string>>;
  #list: readonly string[] | undefined = EMPTY;

  /**
   * `memos` are the server's: a shared list's set, and its names not in a lookup, are worked out once per list
   * (and pair), since every proxy of a shape subscribes the same list.
   */
  constructor(private readonly memos: ListMemos) {
    this.#names = new SharedListChanges(EMPTY, memos.setLookup);
  }

  /** How many names are subscribed. */
  get size(): number {
    return this.#names.size;
  }

  /** Whether `name` is subscribed. */
  has(name: string): boolean {
    const changed = this.#names.changed(name);
    return changed === undefined ? this.#names.lookup.has(name) : changed !== null;
  }

  /**
   * Subscribes exactly `list` when nothing is subscribed and `list` is frozen, holds no name twice and no
   * `wildcard`; the list is kept by reference. False (and nothing changed) otherwise.
   */
  adopt(list: readonly string[], wildcard: string): boolean {
    if (this.size !== 0 || list.length === 0 || !Object.isFrozen(list)) return false;
    const set = this.memos.setOf(list);
    if (set.size !== list.length || set.has(wildcard)) return false;
    this.#names.reset(list, set);
    this.#list = list;
    return true;
  }

  /** Subscribes `name`; true when it was not subscribed. */
  add(name: string): boolean {
    if (this.has(name)) return false;
    if (this.#names.lookup.has(name)) this.#names.restore(name);
    else this.#names.set(name, true);
    this.#list = undefined;
    return true;
  }

  /** Unsubscribes `name`; true when it was subscribed. */
  delete(name: string): boolean {
    if (!this.has(name)) return false;
    this.#names.drop(name);
    this.#list = undefined;
    return true;
  }

  /**
   * The subscribed names as a frozen list, the same object until the subscription changes: the shape memo
   * and name caches key on the list itself.
   */
  list(): readonly string[] {
    return this.#list ??= Object.freeze([...this]);
  }

  /** The subscribed names not in `present`. */
  notIn(present: NameLookup): readonly string[] {
    if (this.#names.unchanged) return this.memos.namesNotIn(this.#names.base, present);
    return [...this].filter((name) => !present.has(name));
  }

  /** The subscribed names: the list's first, in its order, then the ones added since. */
  [Symbol.iterator](): IterableIterator<string> {
    return this.#names.names(itself);
  }
}
