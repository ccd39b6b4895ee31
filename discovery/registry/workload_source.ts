/**
 * Workloads one registry lends another for selection: the orchestrator's pods to ServiceEntries with a
 * `workloadSelector` (`DISCOVERY_ENABLE_SERVICEENTRY_SELECT_PODS`), as WorkloadEntry-shaped instances so the
 * selecting registry converts them as it converts WorkloadEntries.
 *
 * @module
 */
import type { WorkloadEntrySpec } from "@mesh/shared/config/networking/workload_entry";

/** One selectable workload: its identity and what a WorkloadEntry would say about it. */
export interface SelectableWorkload {
  readonly name: string;
  readonly namespace: string;
  readonly spec: WorkloadEntrySpec;
}

/** Workloads of a namespace, and news of their changes. */
export interface WorkloadSource {
  /** The selectable workloads of `namespace` now. */
  workloads(namespace: string): readonly SelectableWorkload[];
  /** Calls `listener` with the namespace of every change; returns an unsubscribe function. */
  onChange(listener: (namespace: string) => void): () => void;
}
