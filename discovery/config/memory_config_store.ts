import type { Resource, ResourceMeta } from "@mesh/shared/config/resource";
import { type Logger, silentLogger } from "@mesh/shared/log/logger";
import type {
  ApplyOptions,
  ConfigEvent,
  ConfigEventHandler,
  ConfigEventType,
  WritableConfigStore,
} from "../model/config_store.ts";
import { deepFreeze } from "../model/deep_freeze.ts";
import { deepEqual } from "./deep_equal.ts";

/** A writable config store whose owner can also declare that every source has delivered its initial state. */
export interface SyncableConfigStore extends WritableConfigStore {
  /** Declares the initial state complete; `synced` is true from then on. */
  markSynced(): void;
  /** Runs `write`, a batch of writes that belong together, with `writing` true until it settles. */
  batch?<T>(write: () => Promise<T>): Promise<T>;
}

/** Options of {@link MemoryConfigStore}. */
export interface MemoryConfigStoreOptions {
  /** Where a failing event handler is reported; the store itself never stops for one. */
  readonly logger?: Logger;
  /** Clock for `creationTimestamp` of resources that arrive without one. */
  readonly now?: () => Date;
}

/**
 * The in-memory config store every source writes into. Stored resources are deep-frozen copies (or the parts
 * a writer handed over, frozen in place); each write
 * gets the next `resourceVersion` of a store-wide counter and emits exactly one event, synchronously.
 * Writing a resource whose group, version, spec, labels and annotations equal the stored ones is a no-op
 * (returns undefined, no event), so sources may re-apply their whole state after every reload.
 */
export class MemoryConfigStore implements SyncableConfigStore {
  readonly #byKind = new Map<string, Map<string, Resource>>();
  readonly #handlers = new Set<ConfigEventHandler>();
  readonly #logger: Logger;
  readonly #now: () => Date;
  #version = 0;
  #synced = false;
  #batches = 0;

  /** An empty store, not yet synced. */
  constructor(options: MemoryConfigStoreOptions = {}) {
    this.#logger = options.logger ?? silentLogger;
    this.#now = options.now ?? (() => new Date());
  }

  /** True once {@link markSynced} was called. */
  get synced(): boolean {
    return this.#synced;
  }

  /** Declares the initial state complete. */
  markSynced(): void {
    this.#synced = true;
  }

  /** True while a batch of writes that belong together is under way (see {@link batch}). */
  get writing(): boolean {
    return this.#batches > 0;
  }

  /**
   * Runs `write`, a batch of writes that belong together (a reload's resources, written in slices of the event
   * loop), with `writing` true until it settles, failed or not. Each write still emits its event at once.
   */
  async batch<T>(write: () => Promise<T>): Promise<T> {
    this.#batches++;
    try {
      return await write();
    } finally {
      this.#batches--;
    }
  }

  /** One resource, or undefined. */
  get(kind: string, namespace: string, name: string): Resource | undefined {
    return this.#byKind.get(kind)?.get(nameKey(namespace, name));
  }

  /** Resources of a kind, in one namespace or all, sorted by namespace then name. */
  list(kind: string, namespace?: string): readonly Resource[] {
    const items = [...(this.#byKind.get(kind)?.values() ?? [])]
      .filter((r) => namespace === undefined || r.meta.namespace === namespace);
    return items.sort(compareResources);
  }

  /** Every stored resource, sorted by kind, namespace and name (for debug listings). */
  all(): readonly Resource[] {
    return [...this.#byKind.keys()].sort().flatMap((kind) => this.list(kind));
  }

  /** Number of stored resources. */
  get size(): number {
    let n = 0;
    for (const items of this.#byKind.values()) n += items.size;
    return n;
  }

  /** Subscribes to changes; returns a function that unsubscribes. */
  onEvent(handler: ConfigEventHandler): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  /**
   * Adds or replaces a resource; returns the stored version, or undefined when nothing changed. The store
   * keeps a deep-frozen copy, or with `handOver` the resource's own parts, frozen in place.
   */
  apply(resource: Resource, options: ApplyOptions = {}): Resource | undefined {
    const { kind } = resource.gvk;
    const { namespace, name } = resource.meta;
    if (!kind || !name || !namespace) {
      throw new TypeError(
        `Cannot store a resource without kind, namespace and name, got "${kind}" "${namespace}/${name}"`,
      );
    }
    const key = nameKey(namespace, name);
    const items = this.#byKind.get(kind) ?? new Map<string, Resource>();
    const previous = items.get(key);
    if (previous && sameContent(previous, resource)) return undefined;
    const meta: ResourceMeta = {
      ...resource.meta,
      resourceVersion: String(++this.#version),
      generation: previous ? (previous.meta.generation ?? 0) + 1 : resource.meta.generation ?? 1,
      creationTimestamp: previous?.meta.creationTimestamp ?? resource.meta.creationTimestamp ??
        this.#now().toISOString(),
    };
    const parts = { gvk: resource.gvk, meta, spec: resource.spec };
    const stored = deepFreeze(options.handOver ? parts : structuredClone(parts)) as Resource;
    items.set(key, stored);
    this.#byKind.set(kind, items);
    this.#emit(previous ? "update" : "add", stored, previous);
    return stored;
  }

  /** Removes a resource; returns the removed version, or undefined when it was absent. */
  delete(kind: string, namespace: string, name: string): Resource | undefined {
    const items = this.#byKind.get(kind);
    const key = nameKey(namespace, name);
    const removed = items?.get(key);
    if (!items || !removed) return undefined;
    items.delete(key);
    if (items.size === 0) this.#byKind.delete(kind);
    this.#version++;
    this.#emit("delete", removed);
    return removed;
  }

  #emit(type: ConfigEventType, resource: Resource, previous?: Resource): void {
    const event: ConfigEvent = previous ? { type, resource, previous } : { type, resource };
    for (const handler of [...this.#handlers]) {
      try {
        handler(event);
      } catch (error) {
        // One broken subscriber must not keep the others (or the writing source) from seeing the change.
        this.#logger.error("config event handler failed", {
          type,
          kind: resource.gvk.kind,
          namespace: resource.meta.namespace,
          name: resource.meta.name,
          error: String(error),
        });
      }
    }
  }
}

function nameKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function compareResources(a: Resource, b: Resource): number {
  return compareStrings(a.meta.namespace, b.meta.namespace) || compareStrings(a.meta.name, b.meta.name);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The parts of a resource a write can change meaningfully; versions and timestamps are the store's. */
function sameContent(a: Resource, b: Resource): boolean {
  return a.gvk.group === b.gvk.group &&
    a.gvk.version === b.gvk.version &&
    deepEqual(a.spec, b.spec) &&
    deepEqual(a.meta.labels ?? {}, b.meta.labels ?? {}) &&
    deepEqual(a.meta.annotations ?? {}, b.meta.annotations ?? {});
}
