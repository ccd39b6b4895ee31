import { addTo, removeFrom } from "../../model/set_map.ts";
/**
 * The entries of each namespace that have a workload selector, indexed by one label their selector requires,
 * so that a workload's event tests only the selectors that may pick it: an entry whose selector matches a
 * workload requires each of its labels, the indexed one included. Entries with an empty selector pick every
 * workload of their namespace and are candidates always.
 */
export class SelectorIndex {
  /** Namespace → indexed label (`key`, newline, `value`; "" for an empty selector) → entry keys. */
  readonly #byLabel = new Map<string, Map<string, Set<string>>>();
  /** Entry key → where it is indexed. */
  readonly #placed = new Map<string, { namespace: string; label: string }>();

  /** Indexes `entry` of `namespace` under one label of `selector` (replacing where it was). */
  put(entry: string, namespace: string, selector: Readonly<Record<string, string>>): void {
    this.delete(entry);
    const first = Object.keys(selector)[0];
    const label = first === undefined ? "" : labelOf(first, selector[first]);
    let labels = this.#byLabel.get(namespace);
    if (!labels) this.#byLabel.set(namespace, labels = new Map());
    addTo(labels, label, entry);
    this.#placed.set(entry, { namespace, label });
  }

  /** Forgets `entry`. */
  delete(entry: string): void {
    const placed = this.#placed.get(entry);
    if (!placed) return;
    this.#placed.delete(entry);
    const labels = this.#byLabel.get(placed.namespace)!;
    if (removeFrom(labels, placed.label, entry) && labels.size === 0) this.#byLabel.delete(placed.namespace);
  }

  /** Every entry of `namespace` that has a selector. */
  *inNamespace(namespace: string): Iterable<string> {
    for (const entries of this.#byLabel.get(namespace)?.values() ?? []) yield* entries;
  }

  /**
   * The entries of `namespace` whose selector may pick a workload with any of `labelSets`: those indexed under
   * one of their labels, and those with an empty selector. Every entry whose selector matches is among them.
   */
  candidates(namespace: string, labelSets: readonly Readonly<Record<string, string>>[]): Set<string> {
    const out = new Set<string>();
    const labels = this.#byLabel.get(namespace);
    if (!labels) return out;
    for (const entry of labels.get("") ?? []) out.add(entry);
    for (const set of labelSets) {
      for (const [key, value] of Object.entries(set)) {
        for (const entry of labels.get(labelOf(key, value)) ?? []) out.add(entry);
      }
    }
    return out;
  }
}

/** A label as an index key; label keys and values never hold a newline. */
function labelOf(key: string, value: string): string {
  return `${key}\n${value}`;
}
