import type { ValidationReport } from "./report.ts";
import { arrayAt, stringAt } from "./fields.ts";
import { isLowercaseDnsLabel } from "./labels.ts";
import { childPath } from "./report.ts";

/** Options of {@link exportToAt}. */
export interface ExportToOptions {
  /** Namespace of the resource: `.` and this name are duplicates. */
  readonly namespace: string;
  /** Service entries may use `~` (visible to no one but the service's own proxies). */
  readonly allowNone: boolean;
}

/**
 * Validates an `exportTo` list: each entry is `.` (own namespace), `*` (all), a namespace name, or for
 * service entries `~` alone; no duplicates; `*` and `~` cannot be mixed with other entries.
 */
export function exportToAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  options: ExportToOptions,
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const entries = arrayAt(report, path, value);
  for (const [i, raw] of entries.entries()) {
    const at = childPath(path, i);
    const entry = stringAt(report, at, raw);
    if (entry === undefined) {
      if (raw === undefined || raw === null) report.error(at, 'must be a namespace, "." or "*", got null');
      continue;
    }
    out.push(entry);
    const key = entry === "." ? options.namespace : entry;
    if (seen.has(key)) {
      report.error(
        at,
        key === entry
          ? `duplicate entry "${entry}" in exportTo`
          : `duplicate entries in exportTo: "." and the current namespace "${options.namespace}"`,
      );
      continue;
    }
    seen.add(key);
    if (entry === "~") {
      if (!options.allowNone) {
        report.error(at, `"~" is only allowed in service entries; expected ".", "*" or a namespace`);
      }
    } else if (entry !== "*" && entry !== "." && !isLowercaseDnsLabel(entry)) {
      report.error(at, `invalid exportTo value "${entry}"; expected ".", "*" or a namespace name`);
    }
  }
  if (out.length > 1 && out.includes("*")) {
    report.error(path, 'cannot have both public ("*") and non-public exportTo values for a resource');
  }
  if (out.length > 1 && out.includes("~")) {
    report.error(path, 'cannot export a service entry to no one ("~") and to someone');
  }
  return out;
}
