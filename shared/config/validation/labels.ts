import type { ValidationReport } from "./report.ts";
import { stringMapAt } from "./fields.ts";
import { mapKeyPath } from "./paths.ts";

const DNS_LABEL = /^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$/;
const LOWERCASE_DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_LABEL_MAX = 63;
const DNS1123_SUBDOMAIN_MAX = 253;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const QUALIFIED_NAME_MAX = 63;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_VALUE_MAX = 63;

/**
 * Reports whether `s` is a DNS label as Istio checks it in specs (hosts, subset and port names, gateway
 * references): alphanumerics and `-`, starting and ending alphanumeric, at most 63 characters. Like Istio,
 * upper case is accepted.
 */
export function isDnsLabel(s: string): boolean {
  return s.length <= DNS1123_LABEL_MAX && DNS_LABEL.test(s);
}

/** Reports whether `s` is a DNS-1123 label as the orchestrator checks namespaces: lower case only. */
export function isLowercaseDnsLabel(s: string): boolean {
  return s.length <= DNS1123_LABEL_MAX && LOWERCASE_DNS_LABEL.test(s);
}

/** Reports whether `s` is a DNS-1123 subdomain (resource names): lowercase labels joined by dots, at most 253. */
export function isDnsSubdomain(s: string): boolean {
  return s.length > 0 && s.length <= DNS1123_SUBDOMAIN_MAX && s.split(".").every(isLowercaseDnsLabel);
}

/**
 * Checks a label key as Istio does: an optional DNS name prefix and `/`, then a name of
 * at most 63 alphanumerics, `-`, `_`, `.` that starts and ends alphanumeric. Returns a message when invalid.
 */
export function checkLabelKey(key: string): string | undefined {
  const slash = key.indexOf("/");
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (
    prefix !== undefined && (prefix.length > DNS1123_SUBDOMAIN_MAX || !prefix.split(".").every(isDnsLabel))
  ) {
    return `invalid label key "${key}": prefix "${prefix}" must be a DNS name of at most 253 characters`;
  }
  if (name.length > QUALIFIED_NAME_MAX || !QUALIFIED_NAME.test(name)) {
    return `invalid label key "${key}": name must be at most 63 characters of [A-Za-z0-9-_.], ` +
      `starting and ending with an alphanumeric character`;
  }
  return undefined;
}

/** Checks a label value: empty, or at most 63 of `[A-Za-z0-9-_.]` starting and ending alphanumeric. */
export function checkLabelValue(value: string): string | undefined {
  if (value.length > LABEL_VALUE_MAX || !LABEL_VALUE.test(value)) {
    return `invalid label value "${value}": must be empty or at most 63 characters of [A-Za-z0-9-_.], ` +
      `starting and ending with an alphanumeric character`;
  }
  return undefined;
}

/**
 * Validates a label map at `path` (keys and values with the orchestrator's label syntax) and returns it,
 * or undefined when absent or not a map of strings.
 */
export function labelsAt(
  report: ValidationReport,
  path: string,
  value: unknown,
): Record<string, string> | undefined {
  const labels = stringMapAt(report, path, value);
  if (labels === undefined) return undefined;
  for (const [key, val] of Object.entries(labels)) {
    const keyError = checkLabelKey(key);
    if (keyError) report.error(mapKeyPath(path, key), keyError);
    const valueError = checkLabelValue(val);
    if (valueError) report.error(mapKeyPath(path, key), valueError);
  }
  return labels;
}
