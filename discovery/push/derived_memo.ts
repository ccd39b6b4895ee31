/**
 * Values generators derive from one push snapshot (plans, encoded parts, indexes), held by the snapshot and
 * dropped with it: two servers in one process, or two snapshots of one server, never share an entry.
 *
 * @module
 */

/** Names one table of a {@link DerivedMemo} and fixes the types of its owners, keys and values. */
export interface DerivedTable<O extends object, K, V> {
  /** The table's name in `/debug/cachez`. */
  readonly name: string;
  /** Never set: carries the table's types. */
  readonly types?: (owner: O, key: K) => V;
}

/** A table of a {@link DerivedMemo}: `name` shows in `/debug/cachez`. Holds nothing itself. */
export function derivedTable<O extends object, K, V>(name: string): DerivedTable<O, K, V> {
  return Object.freeze({ name });
}

interface Table {
  readonly byOwner: WeakMap<object, Map<unknown, unknown>>;
  computed: number;
}

/**
 * Tables of derived values by owner (by identity, held weakly: an owner the snapshot drops takes its entries
 * along) and key. An owner and what is derived from it must not change after the first call.
 */
export class DerivedMemo {
  readonly #tables = new Map<DerivedTable<object, unknown, unknown>, Table>();

  /** The value remembered in `table` for `owner` and `key`, or what `compute()` gives the first time. */
  get<O extends object, K, V>(table: DerivedTable<O, K, V>, owner: O, key: K, compute: () => V): V {
    let state = this.#tables.get(table as DerivedTable<object, unknown, unknown>);
    if (state === undefined) {
      this.#tables.set(
        table as DerivedTable<object, unknown, unknown>,
        state = { byOwner: new WeakMap(), computed: 0 },
      );
    }
    let values = state.byOwner.get(owner);
    if (values === undefined) state.byOwner.set(owner, values = new Map());
    // One lookup on the hot path; `has` only tells a remembered undefined from a missing entry.
    const known = values.get(key);
    if (known !== undefined || values.has(key)) return known as V;
    const value = compute();
    values.set(key, value);
    state.computed++;
    return value;
  }

  /** How many values each table computed (and holds, while their owners live), by table name. */
  stats(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [table, state] of this.#tables) {
      counts[table.name] = (counts[table.name] ?? 0) + state.computed;
    }
    return counts;
  }
}
