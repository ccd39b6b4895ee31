import { childPath, type ValidationReport } from "./report.ts";
import { arrayAt, describe, integerAt, type JsonObject, objectAt, stringAt } from "./fields.ts";

/** Like `objectAt`, but an absent (undefined or null) value is fine and returns undefined silently. */
export function optionalObjectAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  allowed: readonly string[],
): JsonObject | undefined {
  if (value === undefined || value === null) return undefined;
  return objectAt(report, path, value, allowed);
}

/** Returns the string at `path`; records "is required" when it is absent or empty. */
export function requiredStringAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  what = "value",
): string | undefined {
  const s = stringAt(report, path, value);
  if (value !== undefined && value !== null && s === undefined) return undefined;
  if (s === undefined || s === "") {
    report.error(path, `${what} is required`);
    return undefined;
  }
  return s;
}

/**
 * Returns the list of strings at `path` (absent → []), recording an error for each non-string item and,
 * when `check` is given, for each item it returns a message for (at the item's own index).
 */
export function stringListAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  check?: (item: string) => string | undefined,
): string[] {
  const out: string[] = [];
  for (const [i, item] of arrayAt(report, path, value).entries()) {
    const at = childPath(path, i);
    const s = stringAt(report, at, item);
    if (s === undefined) {
      if (item === undefined || item === null) report.error(at, "must be a string, got null");
      continue;
    }
    out.push(s);
    const problem = check?.(s);
    if (problem) report.error(at, problem);
  }
  return out;
}

/** Returns the enum name at `path` when it is one of `allowed`; records an error otherwise. */
export function enumAt<T extends string>(
  report: ValidationReport,
  path: string,
  value: unknown,
  allowed: readonly T[],
): T | undefined {
  const s = stringAt(report, path, value);
  if (s === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(s)) {
    report.error(path, `invalid value "${s}"; expected one of ${allowed.join(", ")}`);
    return undefined;
  }
  return s as T;
}

/** Returns the number at `path` (integers or decimals), or records an error when present but not a number. */
export function numberAt(report: ValidationReport, path: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    report.error(path, `must be a number, got ${describe(value)}`);
    return undefined;
  }
  return value;
}

/** Returns the integer at `path`, recording an error when it is outside `min..max` (inclusive). */
export function integerInRangeAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  min: number,
  max: number = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const n = integerAt(report, path, value);
  if (n === undefined) return undefined;
  if (n < min || n > max) {
    report.error(
      path,
      max === Number.MAX_SAFE_INTEGER
        ? `must be at least ${min}, got ${n}`
        : `must be between ${min} and ${max}, got ${n}`,
    );
  }
  return n;
}

/** True when `value` is neither undefined nor null (a field that is "set"). */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}
