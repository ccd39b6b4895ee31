import type { ValidationReport } from "../validation/report.ts";
import { workloadSelectorAt } from "../validation/selector.ts";

/** Selects workloads by labels; absent or without labels, a security policy applies to its whole namespace. */
export interface WorkloadSelector {
  /** Labels a workload must all carry to be selected. */
  readonly matchLabels?: Readonly<Record<string, string>>;
}

/**
 * Validates the `selector` of a security policy at `path` (`matchLabels` only, Istio's label rules) and
 * returns its labels; an absent selector returns an empty map.
 */
export function validateWorkloadSelector(
  report: ValidationReport,
  path: string,
  value: unknown,
): Record<string, string> {
  return workloadSelectorAt(report, path, value, { field: "matchLabels", requireLabels: false }) ?? {};
}
