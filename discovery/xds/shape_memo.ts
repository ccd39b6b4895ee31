/**
 * Generation results shared by proxies of the same shape. A generator that declares `shapeOf` promises that
 * proxies with equal shapes get equal resources for the same snapshot and request, so the server generates
 * once per shape and every such proxy reuses the list. The memo is cleared on every push, because endpoint
 * data can change without a new snapshot.
 *
 * @module
 */
import type { GenerateRequest } from "../generate/generator.ts";
import type { VersionedResource } from "./versioned_resource.ts";
import type { MemoStats } from "@mesh/shared/memo/memo_stats";

/** What one prefix (shape, type, reason) generated from one snapshot. */
interface PrefixEntry {
  readonly push: object;
  /** Lists by joined name list (the joined string is kept per list, so its hash is computed once). */
  readonly lists: Map<string, readonly VersionedResource[]>;
  /** Each name's resource, or null when it gave none. */
  readonly byName: Map<string, VersionedResource | null>;
  /** Estimated bytes counted for the prefix, returned when a sweep drops it. */
  bytes: number;
  /** The sweep epoch in which it was last read or written. */
  used: number;
}

/** Estimated bytes an entry costs beyond the characters of its key: its table slot and the list's slots. */
const ENTRY_OVERHEAD = 64;

/**
 * Resource lists by memo prefix and name list, and single resources by memo prefix and name, valid for one
 * snapshot until the next push. Name lists must not be modified after they are first used here. The names
 * come from proxies, and a push may be hours away, so the memo is bounded by bytes: past `maxBytes` it starts
 * afresh, which costs only a generation.
 */
export class ShapeMemo {
  readonly #maxBytes: number;
  #byPrefix = new Map<string, PrefixEntry>();
  #bytes = 0;
  /** Counts sweeps ({@link sweep}). */
  #epoch = 0;
  #generation = 0;
  /**
   * Joined forms of name lists and change sets, by identity: a connection keeps its watched names in one
   * array until they change, and one push hands the same change set to every connection, so each is joined
   * once rather than once per proxy per push (3000 names at a full view). Held while the list or set lives.
   */
  readonly #joinedLists = new WeakMap<readonly string[], string>();
  readonly #joinedSets = new WeakMap<ReadonlySet<string>, string>();

  /** Throws RangeError when `maxBytes` is below 1. */
  constructor(maxBytes = 64 * 1024 * 1024) {
    if (!(maxBytes >= 1)) {
      throw new RangeError(`Invalid shape memo bound "${maxBytes}" bytes: expected at least 1`);
    }
    this.#maxBytes = maxBytes;
  }

  /**
   * The memo key of one generation but for the names: who (flavour, shape), what type and why (full,
   * changes). Change sets must not be modified after they are first used here (they are read-only throughout).
   */
  prefix(flavor: string, typeUrl: string, shape: string, request: GenerateRequest): string {
    const changes = request.configsUpdated === undefined ? "*" : this.#joinedSet(request.configsUpdated);
    return [flavor, typeUrl, shape, request.full ? "full" : "partial", changes].join("\u0000");
  }

  /** Equal for two lists of `names` under `prefix` exactly when they share one memo entry. */
  listKey(prefix: string, names: readonly string[]): string {
    return `${prefix}\u0002${this.#joinedList(names)}`;
  }

  /**
   * Changes with every {@link clear}: a build that paused and finds it changed keeps what it made out of the
   * memo, since the push that cleared it may have changed what the build read before.
   */
  get generation(): number {
    return this.#generation;
  }

  #joinedList(names: readonly string[]): string {
    let joined = this.#joinedLists.get(names);
    if (joined === undefined) this.#joinedLists.set(names, joined = names.join("\u0001"));
    return joined;
  }

  #joinedSet(changes: ReadonlySet<string>): string {
    let joined = this.#joinedSets.get(changes);
    if (joined === undefined) this.#joinedSets.set(changes, joined = [...changes].sort().join("\u0001"));
    return joined;
  }

  /** The list generated for `names` under `prefix` from `push`, if any. */
  get(prefix: string, names: readonly string[], push: object): readonly VersionedResource[] | undefined {
    const entry = this.#byPrefix.get(prefix);
    if (entry === undefined || entry.push !== push) return undefined;
    entry.used = this.#epoch;
    return entry.lists.get(this.#joinedList(names));
  }

  /** Remembers the list generated for `names` under `prefix` from `push`. */
  set(prefix: string, names: readonly string[], push: object, resources: readonly VersionedResource[]): void {
    const key = this.#joinedList(names);
    const cost = this.#fits(prefix, key.length + 8 * resources.length);
    if (cost === 0) return;
    const entry = this.#entry(prefix, push);
    entry.bytes += cost;
    entry.lists.set(key, resources);
  }

  /**
   * What each name generated under `prefix` from `push`: its resource, or null when the name gave none; it
   * starts empty for a new snapshot. Add to it with {@link setByName}.
   */
  byName(prefix: string, push: object): ReadonlyMap<string, VersionedResource | null> {
    return this.#entry(prefix, push).byName;
  }

  /** Remembers what `name` generated under `prefix` from `push` (null: nothing). */
  setByName(prefix: string, push: object, name: string, resource: VersionedResource | null): void {
    const cost = this.#fits(prefix, name.length);
    if (cost === 0) return;
    const entry = this.#entry(prefix, push);
    entry.bytes += cost;
    entry.byName.set(name, resource);
  }

  /**
   * Drops the prefixes not read or written since the sweep before last: the proxies of that shape, type and
   * reason have left or been served, and a later push clears them anyway. Called every period P, a prefix
   * goes between 2P and 3P after its last use. Returns how many were dropped.
   */
  sweep(): number {
    const oldest = this.#epoch - 1;
    let dropped = 0;
    for (const [prefix, entry] of this.#byPrefix) {
      if (entry.used >= oldest) continue;
      this.#byPrefix.delete(prefix);
      this.#bytes = Math.max(0, this.#bytes - entry.bytes);
      dropped++;
    }
    this.#epoch++;
    return dropped;
  }

  /** Forgets everything; called on every push. */
  clear(): void {
    this.#generation++;
    this.#byPrefix = new Map();
    this.#bytes = 0;
  }

  /** Number of remembered lists. */
  get size(): number {
    let lists = 0;
    for (const entry of this.#byPrefix.values()) lists += entry.lists.size;
    return lists;
  }

  /** Remembered lists and single resources, and their estimated bytes. */
  stats(): MemoStats {
    let entries = 0;
    for (const entry of this.#byPrefix.values()) entries += entry.lists.size + entry.byName.size;
    return { entries, bytes: this.#bytes, maxBytes: this.#maxBytes };
  }

  /**
   * Makes room for an entry of `chars` under `prefix`; returns the bytes it counted for it, or 0 when it
   * could never fit (not remembered).
   */
  #fits(prefix: string, chars: number): number {
    let cost = chars + ENTRY_OVERHEAD + (this.#byPrefix.has(prefix) ? 0 : prefix.length + ENTRY_OVERHEAD);
    if (cost > this.#maxBytes) return 0;
    if (this.#bytes + cost > this.#maxBytes) {
      this.clear();
      cost = chars + prefix.length + 2 * ENTRY_OVERHEAD;
    }
    this.#bytes += cost;
    return cost;
  }

  #entry(prefix: string, push: object): PrefixEntry {
    let entry = this.#byPrefix.get(prefix);
    if (entry === undefined || entry.push !== push) {
      // The bytes counted for a replaced snapshot's entry stay counted until the prefix goes.
      entry = { push, lists: new Map(), byName: new Map(), bytes: entry?.bytes ?? 0, used: this.#epoch };
      this.#byPrefix.set(prefix, entry);
    }
    entry.used = this.#epoch;
    return entry;
  }
}
