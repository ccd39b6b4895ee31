/** Metadata every mesh resource carries, as in the orchestrator's ObjectMeta (the subset we use). */
export interface ResourceMeta {
  /** Name, unique per kind and namespace. */
  readonly name: string;
  /** Namespace; never empty once loaded (the default namespace fills it in). */
  readonly namespace: string;
  /** Labels, used by selectors. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Annotations, uninterpreted unless a feature reads a specific key. */
  readonly annotations?: Readonly<Record<string, string>>;
  /** Opaque version; the config store sets it on every write. */
  readonly resourceVersion?: string;
  /** Sequence number of changes to the spec, as the orchestrator sets it. */
  readonly generation?: number;
  /** When the resource was created, as RFC 3339 text. */
  readonly creationTimestamp?: string;
  /** Unique id the orchestrator assigns. */
  readonly uid?: string;
}

/** Canonical API group, version and kind of a resource (aliases such as `networking.istio.io` already mapped). */
export interface GroupVersionKind {
  /** Canonical API group, such as `networking.mesh.io`. */
  readonly group: string;
  /** API version, such as `v1alpha3`. */
  readonly version: string;
  /** Kind, such as `VirtualService`. */
  readonly kind: string;
}

/** A typed mesh resource: identity, metadata and the kind-specific spec. */
export interface Resource<Spec = unknown> {
  /** What the resource is. */
  readonly gvk: GroupVersionKind;
  /** Its identity and metadata. */
  readonly meta: ResourceMeta;
  /** The kind-specific spec, already validated. */
  readonly spec: Spec;
}

/** Where a resource came from, for error messages: file and 1-based line of its document. */
export interface SourcePosition {
  /** Path of the file, as given. */
  readonly file: string;
  /** 1-based line where the resource's document starts. */
  readonly line: number;
}

/** The key that identifies a resource in a store: `kind/namespace/name`. */
export function resourceKey(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}
