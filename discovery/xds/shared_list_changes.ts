/**
 * A shared list plus changes: what one stream holds (sent resources, versions held, subscribed names) is most
 * often the very list every proxy of its shape was given, so a record keeps that list by reference (never
 * copied, never modified) and only the changes since in a map of its own. A thousand full-view proxies then
 * share one list per shape instead of a copy each.
 *
 * @module
 */
import type { NameLookup } from "./versioned_resource.ts";

/** The changes of a record that has none: read only. */
const NO_CHANGES: ReadonlyMap<string, never> = new Map<string, never>();

/**
 * A list kept by reference plus the changes over it by name: a value now held, or null for a listed name no
 * longer held. Only names of the list are ever marked null, so the changes never hold more names than the
 * list and the names set since.
 */
export class SharedListChanges<E, V, L extends NameLookup = NameLookup> {
  #base: readonly E[];
  /** The list's lookup by name, built (or fetched from the server's memos) on first use. */
  #lookup: L | undefined;
  /**
   * Made on the first change and dropped by {@link reset}: most records never change between two pushes, and
   * an empty map per record (a few per stream) was held for every stream.
   */
  #changes: Map<string, V | null> | undefined;
  /** Names of the list marked null. */
  #dropped = 0;
  /** Names with a value that are not in the list. */
  #added = 0;

  /**
   * Starts as `empty`; `lookupOf` gives a list's names, and is called at most once per list taken (the
   * server's memos share it between records of the same list).
   */
  constructor(empty: readonly E[], private readonly lookupOf: (list: readonly E[]) => L) {
    this.#base = empty;
  }

  /** The list, as given to {@link reset}. */
  get base(): readonly E[] {
    return this.#base;
  }

  /** The list's names. */
  get lookup(): L {
    return this.#lookup ??= this.lookupOf(this.#base);
  }

  /** The changes over the list, in the order they came. */
  get changes(): ReadonlyMap<string, V | null> {
    return this.#changes ?? NO_CHANGES;
  }

  /** True when nothing changed since the list was taken. */
  get unchanged(): boolean {
    return this.#changes === undefined || this.#changes.size === 0;
  }

  /** How many names are held, for a list that holds no name twice. */
  get size(): number {
    return this.#base.length - this.#dropped + this.#added;
  }

  /** Holds exactly `list` (kept by reference: the caller must not modify it), dropping every change. */
  reset(list: readonly E[], lookup?: L): void {
    if (list !== this.#base) {
      this.#base = list;
      this.#lookup = lookup;
    }
    this.#changes = undefined;
    this.#dropped = 0;
    this.#added = 0;
  }

  /** The change recorded for `name`: a value, null when dropped, undefined when the list decides. */
  changed(name: string): V | null | undefined {
    return this.#changes?.get(name);
  }

  /** `name` is now held with `value`. */
  set(name: string, value: V): void {
    const before = this.#changes?.get(name);
    if (before === null) this.#dropped--;
    else if (before === undefined && !this.lookup.has(name)) this.#added++;
    (this.#changes ??= new Map()).set(name, value);
  }

  /** `name` is held as the list has it, undoing a change: a dropped listed name is held again. */
  restore(name: string): void {
    const before = this.#changes?.get(name);
    if (before === undefined) return;
    if (before === null) this.#dropped--;
    else if (!this.lookup.has(name)) this.#added--;
    this.#changes!.delete(name);
  }

  /** `name` is no longer held (whether or not it was). */
  drop(name: string): void {
    const before = this.#changes?.get(name);
    if (this.lookup.has(name)) {
      if (before !== null) {
        this.#dropped++;
        (this.#changes ??= new Map()).set(name, null);
      }
    } else if (before !== undefined) {
      this.#added--;
      this.#changes!.delete(name);
    }
  }

  /** The names held: the list's that no change overrides first, in its order, then those set since. */
  *names(nameOf: (element: E) => string): IterableIterator<string> {
    const changes = this.#changes ?? NO_CHANGES;
    for (const element of this.#base) {
      const name = nameOf(element);
      if (!changes.has(name)) yield name;
    }
    for (const [name, value] of changes) if (value !== null) yield name;
  }
}
