import { childPath, type ValidationReport } from "./report.ts";
import { quoteExcerpt } from "./excerpt.ts";

/** A plain JSON object as decoded from YAML or JSON. */
export type JsonObject = Record<string, unknown>;

/** Reports whether `value` is a plain object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Rejects keys of `obj` that are not in `allowed`: unknown fields are errors, as in Istio's strict decoding.
 * Returns `obj` when it is an object, else records an error and returns undefined.
 */
export function objectAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  allowed: readonly string[],
): JsonObject | undefined {
  if (!isObject(value)) {
    report.error(path, `must be an object, got ${describe(value)}`);
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      report.error(
        childPath(path, key),
        `unknown field ${quoteExcerpt(key)}; expected one of ${allowed.join(", ")}`,
      );
    }
  }
  return value;
}

/** Returns the array at `path`, or records an error and returns [] when it is neither absent nor an array. */
export function arrayAt(report: ValidationReport, path: string, value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    report.error(path, `must be a list, got ${describe(value)}`);
    return [];
  }
  return value;
}

/** Returns the string at `path`, or records an error when present but not a string. */
export function stringAt(report: ValidationReport, path: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") {
    report.error(path, `must be a string, got ${describe(value)}`);
    return undefined;
  }
  return value;
}

/** Returns the integer at `path`, or records an error when present but not an integer. */
export function integerAt(report: ValidationReport, path: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value)) {
    report.error(path, `must be an integer, got ${describe(value)}`);
    return undefined;
  }
  return value;
}

/** Returns the boolean at `path`, or records an error when present but not a boolean. */
export function booleanAt(report: ValidationReport, path: string, value: unknown): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") {
    report.error(path, `must be true or false, got ${describe(value)}`);
    return undefined;
  }
  return value;
}

/** Returns a string-to-string map at `path` (labels, headers), recording an error for non-string values. */
export function stringMapAt(
  report: ValidationReport,
  path: string,
  value: unknown,
): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) {
    report.error(path, `must be a map of strings, got ${describe(value)}`);
    return undefined;
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") report.error(childPath(path, k), `must be a string, got ${describe(v)}`);
    else out[k] = v;
  }
  return out;
}

/** Short description of a JSON value's type for error messages. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return `string ${quoteExcerpt(value)}`;
  return `${typeof value} ${String(value)}`;
}
