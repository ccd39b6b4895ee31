/**
 * The encoded-resource cache: `google.protobuf.Any` bytes keyed by exactly what their generator read, so a
 * resource is encoded once per version of its inputs and shared by every proxy of the same shape.
 *
 * Entries know the config and service keys they depend on; `invalidate` drops exactly the dependents of the
 * keys a push names. When the cache is bounded, entries are evicted in least-recently-used order as the
 * second-chance ("clock") algorithm approximates it: a hit only sets a flag (reordering a Map on every hit
 * costs more than the rest of a lookup, and a full push makes a hit per resource per proxy), and eviction
 * moves flagged entries to the back once instead of evicting them.
 *
 * The server invalidates before any generation for a new snapshot starts; a generation that runs in slices
 * adds nothing once {@link XdsCache.generation} changed under it, so an entry built from an older snapshot is
 * never added after the invalidation that should have removed it.
 *
 * @module
 */
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { XdsCacheKey } from "../generate/generator.ts";
import type { VersionedResource } from "./versioned_resource.ts";

/** How the cache behaves, from `DISCOVERY_ENABLE_XDS_CACHE`, `DISCOVERY_XDS_CACHE_SIZE`, `DISCOVERY_XDS_CACHE_STATS`. */
export interface XdsCacheOptions {
  /** False makes every read a miss and every add a no-op (`DISCOVERY_ENABLE_XDS_CACHE`). */
  readonly enabled: boolean;
  /** Maximum entries; <= 0 means unbounded. */
  readonly maxEntries: number;
  /** Count hits and misses in `xds_cache_reads`. */
  readonly stats: boolean;
  /** Where `xds_cache_*` metrics go; omitted in unit tests that only check behaviour. */
  readonly metrics?: Metrics;
}

interface Entry {
  readonly key: XdsCacheKey;
  readonly typeUrl: string;
  readonly resource: VersionedResource;
  /** Read since it was added or last given a second chance. */
  referenced: boolean;
  /** The sweep epoch in which it was last added, read or found held by a connected stream. */
  used: number;
}

/** One entry as `/debug/cachez` shows it. */
export interface CacheEntryInfo {
  /** The cache key id: everything the resource's build read. */
  readonly key: string;
  /** Type URL of the resource. */
  readonly typeUrl: string;
  /** Resource name. */
  readonly name: string;
  /** Size of the encoded resource, in bytes. */
  readonly bytes: number;
  /** Config and service keys (`kind/namespace/name`) whose change drops the entry. */
  readonly dependsOn: readonly string[];
}

/** Counters and contents for `/debug/cachez`. */
export interface CacheStats {
  /** Whether the cache is on. */
  readonly enabled: boolean;
  /** Entries held. */
  readonly size: number;
  /** The bound on entries; <= 0 means unbounded. */
  readonly maxEntries: number;
  /** Total size of the encoded resources held, in bytes. */
  readonly bytes: number;
  /** Reads that found an entry, since start. */
  readonly hits: number;
  /** Reads that found none, since start. */
  readonly misses: number;
  /** Entries evicted by the bound, since start. */
  readonly evictions: number;
  /** Entries dropped by invalidation or clearing, since start. */
  readonly invalidations: number;
  /** Entries released by {@link XdsCache.sweep} because no connected stream held or read them, since start. */
  readonly released: number;
}

/** Bounded (clock-LRU) cache of encoded resources with a reverse index from dependency keys to entries. */
export class XdsCache {
  /** Map order is the clock: eviction looks at the first entry. */
  readonly #entries = new Map<string, Entry>();
  readonly #dependents = new Map<string, Set<string>>();
  #hits = 0;
  #misses = 0;
  #evictions = 0;
  #invalidations = 0;
  #released = 0;
  #bytes = 0;
  /** Counts sweeps; an entry remembers the epoch of its last use, so a hit costs one field write. */
  #epoch = 0;
  #generation = 0;
  /**
   * The clock's hand: one iterator kept over the entries. A Map keeps deleted entries' slots until it is
   * rehashed, and a fresh iterator walks past every one of them, so starting one per eviction made a run of
   * evictions quadratic in the entries evicted since the last rehash. An iterator holds the table it last
   * read, and with it every entry that table held, until it moves on: a sweep or a clear lets go of it.
   */
  #hand: Iterator<[string, Entry]> | undefined;

  /** An empty cache; `options` are fixed for its life. */
  constructor(readonly options: XdsCacheOptions) {}

  /** True when `DISCOVERY_ENABLE_XDS_CACHE` is on. */
  get enabled(): boolean {
    return this.options.enabled;
  }

  /** Changes with every {@link invalidate} and {@link clear}, dropped entries or not. */
  get generation(): number {
    return this.#generation;
  }

  /** Number of entries. */
  get size(): number {
    return this.#entries.size;
  }

  /** The entry for a key id, marked as recently used; undefined on a miss or when disabled. */
  get(id: string): VersionedResource | undefined {
    if (!this.options.enabled) return undefined;
    const entry = this.#entries.get(id);
    if (entry === undefined) {
      this.#misses++;
      if (this.options.stats) this.options.metrics?.counter("xds_cache_reads").inc({ type: "miss" });
      return undefined;
    }
    entry.referenced = true;
    entry.used = this.#epoch;
    this.#hits++;
    if (this.options.stats) this.options.metrics?.counter("xds_cache_reads").inc({ type: "hit" });
    return entry.resource;
  }

  /** Stores an encoded resource under `key`, evicting the least recently used entries beyond the bound. */
  add(key: XdsCacheKey, typeUrl: string, resource: VersionedResource): void {
    if (!this.options.enabled) return;
    this.#remove(key.id);
    this.#entries.set(key.id, { key, typeUrl, resource, referenced: false, used: this.#epoch });
    this.#bytes += resource.encoded.length;
    for (const dep of key.dependsOn) {
      let ids = this.#dependents.get(dep);
      if (ids === undefined) {
        ids = new Set();
        this.#dependents.set(dep, ids);
      }
      ids.add(key.id);
    }
    this.#evictBeyond(this.options.maxEntries);
    this.#reportSize();
  }

  /** Drops every entry that depends on one of `keys`; returns how many were dropped. */
  invalidate(keys: Iterable<string>): number {
    this.#generation++;
    let dropped = 0;
    for (const dep of keys) {
      const ids = this.#dependents.get(dep);
      if (ids === undefined) continue;
      for (const id of [...ids]) if (this.#remove(id)) dropped++;
    }
    this.#invalidations += dropped;
    this.#reportSize();
    return dropped;
  }

  /** Drops every entry; for pushes whose changes are unknown. Returns how many were dropped. */
  clear(): number {
    this.#generation++;
    this.#hand = undefined;
    const dropped = this.#entries.size;
    this.#entries.clear();
    this.#dependents.clear();
    this.#bytes = 0;
    this.#invalidations += dropped;
    this.#reportSize();
    return dropped;
  }

  /**
   * Releases entries nobody can use any more: an entry `held` (sent to a connected stream and still recorded
   * as held by it), read or added since the sweep before last stays; any other is dropped. Called every
   * period P, an entry goes between 2P and 3P after its last holder left, so a proxy that reconnects sooner
   * still hits. Leaves the bound and invalidation as they are. Returns how many were dropped.
   */
  sweep(held: ReadonlySet<VersionedResource>): number {
    const oldest = this.#epoch - 1;
    const stale: string[] = [];
    for (const [id, entry] of this.#entries) {
      if (held.has(entry.resource)) entry.used = this.#epoch;
      else if (entry.used < oldest) stale.push(id);
    }
    for (const id of stale) this.#remove(id);
    this.#hand = undefined;
    this.#released += stale.length;
    this.#epoch++;
    if (stale.length > 0) this.#reportSize();
    return stale.length;
  }

  /** Counters for the debug interface. */
  stats(): CacheStats {
    return {
      enabled: this.options.enabled,
      size: this.#entries.size,
      maxEntries: this.options.maxEntries,
      bytes: this.#bytes,
      hits: this.#hits,
      misses: this.#misses,
      evictions: this.#evictions,
      invalidations: this.#invalidations,
      released: this.#released,
    };
  }

  /** Every entry, in clock order (roughly least recently used first). */
  entries(): CacheEntryInfo[] {
    return [...this.#entries.values()].map((e) => ({
      key: e.key.id,
      typeUrl: e.typeUrl,
      name: e.resource.name,
      bytes: e.resource.encoded.length,
      dependsOn: e.key.dependsOn,
    }));
  }

  /** Each pass clears a flag, so this ends within two rounds of the clock. */
  #evictBeyond(max: number): void {
    if (max <= 0) return;
    while (this.#entries.size > max) {
      let next = this.#hand?.next();
      if (next === undefined || next.done) {
        this.#hand = this.#entries.entries();
        next = this.#hand.next();
      }
      // Entries moved to the back are met again once the hand gets there, as the clock goes round.
      const [id, entry] = next.value as [string, Entry];
      if (entry.referenced) {
        entry.referenced = false;
        this.#entries.delete(id);
        this.#entries.set(id, entry);
        continue;
      }
      this.#remove(id);
      this.#evictions++;
      this.options.metrics?.counter("xds_cache_evictions").inc();
    }
  }

  #remove(id: string): boolean {
    const entry = this.#entries.get(id);
    if (entry === undefined) return false;
    this.#entries.delete(id);
    this.#bytes -= entry.resource.encoded.length;
    for (const dep of entry.key.dependsOn) {
      const ids = this.#dependents.get(dep);
      ids?.delete(id);
      if (ids?.size === 0) this.#dependents.delete(dep);
    }
    return true;
  }

  #reportSize(): void {
    this.options.metrics?.gauge("xds_cache_size").set(this.#entries.size);
  }
}
