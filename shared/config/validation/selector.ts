import { childPath, type ValidationReport } from "./report.ts";
import { objectAt, stringMapAt } from "./fields.ts";
import { checkLabelKey, checkLabelValue } from "./labels.ts";
import { mapKeyPath } from "./paths.ts";

/**
 * Validates the labels of a workload selector as Istio does: no empty keys and no `*` in keys or values
 * (errors); keys or values that break label syntax can never match a workload (warnings).
 */
export function selectorLabelsAt(
  report: ValidationReport,
  path: string,
  value: unknown,
): Record<string, string> | undefined {
  const labels = stringMapAt(report, path, value);
  if (labels === undefined) return undefined;
  for (const [key, val] of Object.entries(labels)) {
    const at = mapKeyPath(path, key);
    if (key === "") report.error(at, `empty key is not supported in selector: "${key}=${val}"`);
    else if (key.includes("*") || val.includes("*")) {
      report.error(at, `wildcard is not supported in selector: "${key}=${val}"`);
    } else {
      const problem = checkLabelKey(key) ?? checkLabelValue(val);
      if (problem) report.warn(at, `${problem}; the selector can never match a workload`);
    }
  }
  return labels;
}

/** Options of {@link workloadSelectorAt}. */
export interface WorkloadSelectorOptions {
  /** Name of the label map field: `labels` (networking kinds) or `matchLabels` (security kinds). */
  readonly field: "labels" | "matchLabels";
  /** When true, a selector without labels is an error; when false, a warning. */
  readonly requireLabels: boolean;
}

/**
 * Validates a workload selector object `{ <field>: { key: value } }` at `path` and returns its labels,
 * or undefined when the selector is absent.
 */
export function workloadSelectorAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  options: WorkloadSelectorOptions,
): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  const selector = objectAt(report, path, value, [options.field]);
  if (selector === undefined) return undefined;
  const labelsPath = childPath(path, options.field);
  const labels = selectorLabelsAt(report, labelsPath, selector[options.field]) ?? {};
  if (Object.keys(labels).length === 0) {
    const message =
      "a workload selector must have at least one label; omit the selector to select every workload";
    if (options.requireLabels) report.error(labelsPath, message);
    else report.warn(labelsPath, message);
  }
  return labels;
}
