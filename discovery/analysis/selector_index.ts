import { selects } from "./analysis_util.ts";

/**
 * Items with label selectors, indexed by one pair of each selector, so finding the items that select a set of
 * labels checks only the items that could: those whose indexed pair the labels have, and those with an empty
 * selector (which selects everything).
 */
export class SelectorIndex<T> {
  readonly #all: { item: T; selector: Readonly<Record<string, string>>; order: number }[] = [];
  readonly #byPair = new Map<string, number[]>();
  readonly #selectAll: number[] = [];

  /** Indexes `items` by the selector `selectorOf` gives each. */
  constructor(items: Iterable<T>, selectorOf: (item: T) => Readonly<Record<string, string>>) {
    for (const item of items) {
      const selector = selectorOf(item);
      const order = this.#all.length;
      this.#all.push({ item, selector, order });
      const keys = Object.keys(selector);
      if (keys.length === 0) {
        this.#selectAll.push(order);
        continue;
      }
      const pair = `${keys[0]}=${selector[keys[0]]}`;
      const list = this.#byPair.get(pair) ?? [];
      list.push(order);
      this.#byPair.set(pair, list);
    }
  }

  /** The items whose selector selects `labels`, in the order they were given. */
  matching(labels: Readonly<Record<string, string>>): T[] {
    const candidates = [...this.#selectAll];
    for (const [key, value] of Object.entries(labels)) {
      candidates.push(...(this.#byPair.get(`${key}=${value}`) ?? []));
    }
    return candidates.sort((a, b) => a - b)
      .filter((i) => selects(this.#all[i].selector, labels))
      .map((i) => this.#all[i].item);
  }
}
