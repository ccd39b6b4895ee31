/**
 * Values generators derive from one push snapshot (plans, encoded parts, indexes), held by the snapshot and
 * dropped with it. A table whose values depend on their owner alone (a service's domains, a spec's digest) is
 * `carried`: the pipeline hands it from each snapshot's memo to the next, so an owner that outlives a snapshot
 * is not worked out again. Two servers in one process never share an entry.
 *
 * @module
 */

/** Names one table of a {@link DerivedMemo} and fixes the types of its owners, keys and values. */
export interface DerivedTable<O extends object, K, V> {
  /** The table's name in `/debug/cachez`. */
  readonly name: string;
  /** True when values depend on their owner alone, so the next snapshot's memo may keep them. */
  readonly carried: boolean;
  /** Never set: carries the table's types. */
  readonly types?: (owner: O, key: K) => V;
}

/**
 * A table of a {@link DerivedMemo}: `name` shows in `/debug/cachez`; `carried` when every value is a function of
 * its owner and key alone (never of the snapshot). Holds nothing itself.
 */
export function derivedTable<O extends object, K, V>(
  name: string,
  options: { readonly carried?: boolean } = {},
): DerivedTable<O, K, V> {
  return Object.freeze({ name, carried: options.carried ?? false });
}

interface Table {
  readonly byOwner: WeakMap<object, Map<unknown, unknown>>;
  /** Values keyed by owner alone (key `undefined`): one WeakMap entry each, no map per owner. */
  readonly single: WeakMap<object, unknown>;
  computed: number;
}

/**
 * Tables of derived values by owner (by identity, held weakly: an owner the snapshot drops takes its entries
 * along) and key. An owner and what is derived from it must not change after the first call.
 */
export class DerivedMemo {
  readonly #tables = new Map<DerivedTable<object, unknown, unknown>, Table>();

  /** A memo for the next snapshot: the carried tables of this one (shared, not copied), nothing else. */
  successor(): DerivedMemo {
    const next = new DerivedMemo();
    for (const [table, state] of this.#tables) if (table.carried) next.#tables.set(table, state);
    return next;
  }

  /** The value remembered in `table` for `owner` and `key`, or what `compute()` gives the first time. */
  get<O extends object, K, V>(table: DerivedTable<O, K, V>, owner: O, key: K, compute: () => V): V {
    const entry = table as DerivedTable<object, unknown, unknown>;
    let state = this.#tables.get(entry);
    if (state === undefined) {
      this.#tables.set(entry, state = { byOwner: new WeakMap(), single: new WeakMap(), computed: 0 });
    }
    // One lookup on the hot path; `has` only tells a remembered undefined from a missing entry.
    if (key === undefined) {
      const known = state.single.get(owner);
      if (known !== undefined || state.single.has(owner)) return known as V;
      const value = compute();
      state.single.set(owner, value);
      state.computed++;
      return value;
    }
    let values = state.byOwner.get(owner);
    if (values === undefined) state.byOwner.set(owner, values = new Map());
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
