/**
 * One string object per watched resource name across connections. Every proxy's request decodes its own copies
 * of the names it watches (3000–8000 at a full view); a connection that keeps them would hold a thousand copies
 * of each name at a thousand proxies. The table is bounded: past `maxEntries` it starts afresh, which costs
 * only sharing (names already kept stay valid), never correctness.
 *
 * @module
 */

/** Returns a shared string equal to each name it is given. */
export class NameInterner {
  readonly #maxEntries: number;
  #table = new Map<string, string>();
  readonly #lists = new WeakSet<readonly string[]>();

  /** Throws RangeError when `maxEntries` is below 1. */
  constructor(maxEntries = 500_000) {
    if (!(maxEntries >= 1)) {
      throw new RangeError(`Invalid interner size "${maxEntries}": expected at least 1`);
    }
    this.#maxEntries = maxEntries;
  }

  /** The shared string equal to `name`. */
  intern(name: string): string {
    const shared = this.#table.get(name);
    if (shared !== undefined) return shared;
    if (this.#table.size >= this.#maxEntries) this.#table = new Map();
    this.#table.set(name, name);
    return name;
  }

  /**
   * The shared strings equal to `names`, as a frozen list: `names` itself when it is a list this interner
   * made (at no cost), else a new one.
   */
  internAll(names: readonly string[]): readonly string[] {
    if (this.#lists.has(names)) return names;
    const list = Object.freeze(names.map((name) => this.intern(name)));
    this.#lists.add(list);
    return list;
  }

  /** Names in the table now. */
  get size(): number {
    return this.#table.size;
  }
}
