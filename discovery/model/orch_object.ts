/**
 * Orchestrator objects as configuration analysis reads them: the kinds, and the metadata and fields kept of
 * each. Shared by the orchestrator (`orch/`, which keeps slim copies of them) and analysis (which reads them),
 * so neither imports the other.
 *
 * @module
 */

/** The orchestrator kinds analyzers read. */
export type OrchKind =
  | "Namespace"
  | "Pod"
  | "Service"
  | "Deployment"
  | "Secret"
  | "ConfigMap"
  | "CustomResourceDefinition";

/** Every orchestrator kind analyzers read. */
export const ORCH_KINDS: readonly OrchKind[] = [
  "Namespace",
  "Pod",
  "Service",
  "Deployment",
  "Secret",
  "ConfigMap",
  "CustomResourceDefinition",
];

/** Metadata of an orchestrator object, as its API serves it (the fields analyzers read). */
export interface OrchObjectMeta {
  readonly name: string;
  /** Absent for cluster-scoped objects. */
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** An orchestrator object as its API serves it; analyzers read `spec` and `data` field by field. */
export interface OrchObject {
  readonly kind: OrchKind;
  readonly metadata: OrchObjectMeta;
  readonly spec?: unknown;
  readonly data?: Readonly<Record<string, string>>;
}
