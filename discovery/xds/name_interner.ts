/**
 * One string object per watched resource name across connections. Every proxy's request decodes its own copies
 * of the names it watches (3000–8000 at a full view); a connection that keeps them would hold a thousand copies
 * of each name at a thousand proxies. The table is bounded by bytes: past `maxBytes` it starts afresh, which
 * costs only sharing (names already kept stay valid), never correctness; its owner clears it when no stream
 * needs it any more.
 *
 * @module
 */

import type { MemoStats } from "@mesh/shared/memo/memo_stats";

/** Estimated bytes an entry costs beyond its characters: its table slot and the string's header. */
export const NAME_ENTRY_OVERHEAD = 48;

/** Returns a shared string equal to each name it is given. */
export class NameInterner {
  readonly #maxBytes: number;
  #table = new Map<string, string>();
  #bytes = 0;
  readonly #lists = new WeakSet<readonly string[]>();

  /** Throws RangeError when `maxBytes` is below 1. */
  constructor(maxBytes = 16 * 1024 * 1024) {
    if (!(maxBytes >= 1)) {
      throw new RangeError(`Invalid interner bound "${maxBytes}" bytes: expected at least 1`);
    }
    this.#maxBytes = maxBytes;
  }

  /** The shared string equal to `name`; a name bigger than the whole bound is returned as it is, not kept. */
  intern(name: string): string {
    const shared = this.#table.get(name);
    if (shared !== undefined) return shared;
    const cost = name.length + NAME_ENTRY_OVERHEAD;
    if (cost > this.#maxBytes) return name;
    if (this.#bytes + cost > this.#maxBytes) this.clear();
    this.#table.set(name, name);
    this.#bytes += cost;
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

  /** Forgets every name; names handed out stay valid. */
  clear(): void {
    this.#table = new Map();
    this.#bytes = 0;
  }

  /** Names in the table now. */
  get size(): number {
    return this.#table.size;
  }

  /** Entries and estimated bytes held now. */
  stats(): MemoStats {
    return { entries: this.#table.size, bytes: this.#bytes, maxBytes: this.#maxBytes };
  }
}
