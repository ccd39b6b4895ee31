import type { Resource } from "../../shared/config/resource.ts";

/** What happened to a resource. */
export type ConfigEventType = "add" | "update" | "delete";

/** One change in a config store; `resource` is the new version (or, for delete, the last one). */
export interface ConfigEvent {
  readonly type: ConfigEventType;
  readonly resource: Resource;
  /** The version replaced by an update. */
  readonly previous?: Resource;
}

/** Receives config events; called synchronously after the store has changed. */
export type ConfigEventHandler = (event: ConfigEvent) => void;

/**
 * The one read interface every config source feeds: resources by kind (canonical kind name such as
 * "VirtualService"), namespace and name, plus change events. Implementations never return mutable objects.
 */
export interface ConfigStore {
  /** One resource, or undefined. */
  get(kind: string, namespace: string, name: string): Resource | undefined;
  /** Resources of a kind, in one namespace or (namespace undefined) all, sorted by namespace then name. */
  list(kind: string, namespace?: string): readonly Resource[];
  /** Subscribes to changes; returns a function that unsubscribes. */
  onEvent(handler: ConfigEventHandler): () => void;
  /** True once every source feeding the store has delivered its initial state. */
  readonly synced: boolean;
}

/** A config store that sources write into. Each write sets a new `resourceVersion` and emits one event. */
export interface WritableConfigStore extends ConfigStore {
  /** Adds or replaces a resource; returns the stored version, or undefined when nothing changed. */
  apply(resource: Resource): Resource | undefined;
  /** Removes a resource; returns the removed version, or undefined when it was absent. */
  delete(kind: string, namespace: string, name: string): Resource | undefined;
}

/** A document a source refused, kept for `/debug/configz` until the document is fixed or removed. */
export interface RejectedConfig {
  readonly file: string;
  readonly line: number;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly errors: readonly string[];
}
