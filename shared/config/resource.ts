/** Metadata every mesh resource carries, as in the orchestrator's ObjectMeta (the subset we use). */
export interface ResourceMeta {
  readonly name: string;
  readonly namespace: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  /** Opaque version; the config store sets it on every write. */
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly creationTimestamp?: string;
  readonly uid?: string;
}

/** Canonical API group, version and kind of a resource (aliases such as `networking.istio.io` already mapped). */
export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** A typed mesh resource: identity, metadata and the kind-specific spec. */
export interface Resource<Spec = unknown> {
  readonly gvk: GroupVersionKind;
  readonly meta: ResourceMeta;
  readonly spec: Spec;
}

/** Where a resource came from, for error messages: file and 1-based line of its document. */
export interface SourcePosition {
  readonly file: string;
  readonly line: number;
}

/** The key that identifies a resource in a store: `kind/namespace/name`. */
export function resourceKey(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}
