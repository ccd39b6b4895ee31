import type { Resource } from "@mesh/shared/config/resource";

/** What happened to a resource. */
export type ConfigEventType = "add" | "update" | "delete";

/** One change in a config store; `resource` is the new version (or, for delete, the last one). */
export interface ConfigEvent {
  /** Whether the resource was added, updated or deleted. */
  readonly type: ConfigEventType;
  /** The resource after the change; for a delete, its last version. */
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
  /**
   * True while a source is writing changes that belong together (the resources of one reload of a config
   * directory, written in slices of the event loop): a push waits for the end rather than publish half of them.
   */
  readonly writing?: boolean;
}

/** How a write hands its resource to the store. */
export interface ApplyOptions {
  /**
   * The caller gives the resource away and never changes it again: the store keeps its parts, frozen in
   * place, instead of a deep copy made in one go, so a writer can freeze a large resource in slices first.
   * Parts a caller froze already are taken as deeply frozen.
   */
  readonly handOver?: boolean;
}

/** A config store that sources write into. Each write sets a new `resourceVersion` and emits one event. */
export interface WritableConfigStore extends ConfigStore {
  /** Adds or replaces a resource; returns the stored version, or undefined when nothing changed. */
  apply(resource: Resource, options?: ApplyOptions): Resource | undefined;
  /** Removes a resource; returns the removed version, or undefined when it was absent. */
  delete(kind: string, namespace: string, name: string): Resource | undefined;
}

/** A document a source refused, kept for `/debug/configz` until the document is fixed or removed. */
export interface RejectedConfig {
  /** Path of the file the document is in. */
  readonly file: string;
  /** 1-based line where the refused document starts. */
  readonly line: number;
  /** Kind of the resource, when the document names one. */
  readonly kind?: string;
  /** Namespace of the resource, when known. */
  readonly namespace?: string;
  /** Name of the resource, when the document names one. */
  readonly name?: string;
  /** Every error found, each as `file:line: field.path: message`. */
  readonly errors: readonly string[];
}
