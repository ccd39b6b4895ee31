import { childPath, type ValidationReport } from "../validation/report.ts";
import { quoteExcerpt } from "../validation/excerpt.ts";
import { booleanAt, describe, integerAt, isObject, stringAt } from "../validation/fields.ts";
import { durationAt, type DurationRules } from "../validation/durations.ts";
import { mapKeyPath } from "../validation/paths.ts";
import { checkPort } from "../validation/ports.ts";
import { enumAt, numberAt } from "../validation/values.ts";

/**
 * Reads and checks one field of a protobuf-JSON message as decoded from YAML: returns the typed value, or
 * records errors under `path` and returns undefined. Absent (undefined or null) values return undefined
 * without an error, as unset proto3 fields.
 */
export type Decoder<T> = (report: ValidationReport, path: string, value: unknown) => T | undefined;

/** Field decoders of a message type, one per field (all optional in the input). */
export type Fields<T> = { readonly [K in keyof T]-?: Decoder<NonNullable<T[K]>> };

/** Options of {@link message}. */
export interface MessageOptions<T> {
  /** Groups of fields of which at most one may be set (protobuf `oneof`). */
  readonly oneofs?: readonly (readonly (keyof T & string)[])[];
  /** Checks across fields of the decoded message; runs only when its fields decoded without error. */
  readonly check?: (report: ValidationReport, path: string, message: Partial<T>) => void;
}

/** A string field. */
export const str: Decoder<string> = stringAt;

/** A bool (or `google.protobuf.BoolValue`) field. */
export const bool: Decoder<boolean> = booleanAt;

/** A double field. */
export const double: Decoder<number> = numberAt;

/** An int32 (or `Int32Value`) field. */
export const int32: Decoder<number> = (report, path, value) =>
  ranged(report, path, value, -(2 ** 31), 2 ** 31 - 1);

/** A uint32 (or `UInt32Value`) field. */
export const uint32: Decoder<number> = (report, path, value) => ranged(report, path, value, 0, 2 ** 32 - 1);

/** A port number: an integer in 1..65535. */
export const port: Decoder<number> = (report, path, value) => {
  const n = integerAt(report, path, value);
  const problem = n === undefined ? undefined : checkPort(n);
  if (problem) report.error(path, problem);
  return problem ? undefined : n;
};

/** A `google.protobuf.Duration` written as a Go duration (`10s`, `100ms`), in nanoseconds. */
export function duration(rules: DurationRules = {}): Decoder<bigint> {
  return (report, path, value) => {
    const before = report.errors.length;
    const ns = durationAt(report, path, value, rules);
    return report.errors.length === before ? ns : undefined;
  };
}

/** An enum field written by name. */
export function enumOf<T extends string>(...names: readonly T[]): Decoder<T> {
  return (report, path, value) => enumAt(report, path, value, names);
}

/** A string field with a check returning a problem message. */
export function checkedStr(check: (value: string) => string | undefined): Decoder<string> {
  return (report, path, value) => {
    const s = stringAt(report, path, value);
    const problem = s === undefined ? undefined : check(s);
    if (problem) report.error(path, problem);
    return problem ? undefined : s;
  };
}

/** A repeated field. */
export function list<T>(item: Decoder<T>): Decoder<T[]> {
  return (report, path, value) => {
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value)) {
      report.error(path, `must be a list, got ${describe(value)}`);
      return undefined;
    }
    const out: T[] = [];
    for (const [i, raw] of value.entries()) {
      const at = childPath(path, i);
      if (raw === null || raw === undefined) {
        report.error(at, "must not be null");
        continue;
      }
      const decoded = item(report, at, raw);
      if (decoded !== undefined) out.push(decoded);
    }
    return out;
  };
}

/** A `map<string, T>` field. */
export function mapOf<T>(item: Decoder<T>): Decoder<Record<string, T>> {
  return (report, path, value) => {
    if (value === undefined || value === null) return undefined;
    if (!isObject(value)) {
      report.error(path, `must be a map, got ${describe(value)}`);
      return undefined;
    }
    const out: Record<string, T> = {};
    for (const [key, raw] of Object.entries(value)) {
      const decoded = item(report, mapKeyPath(path, key), raw);
      if (decoded !== undefined) out[key] = decoded;
    }
    return out;
  };
}

/** A message field: known fields only (camelCase or the proto's snake_case names), each decoded. */
export function message<T>(fields: Fields<T>, options: MessageOptions<T> = {}): Decoder<Partial<T>> {
  const names = Object.keys(fields);
  return (report, path, value) => {
    if (value === undefined || value === null) return undefined;
    if (!isObject(value)) {
      report.error(path, `must be an object, got ${describe(value)}`);
      return undefined;
    }
    const before = report.errors.length;
    const out: Record<string, unknown> = {};
    const seen = new Set<string>();
    for (const [key, raw] of Object.entries(value)) {
      const name = names.includes(key) ? key : snakeToCamel(key);
      const at = childPath(path, key);
      if (!names.includes(name)) {
        report.error(at, `unknown field ${quoteExcerpt(key)}; expected one of ${names.join(", ")}`);
        continue;
      }
      if (seen.has(name)) {
        report.error(at, `field "${name}" is set twice (as camelCase and snake_case)`);
        continue;
      }
      seen.add(name);
      const decoded = (fields as Record<string, Decoder<unknown>>)[name](report, at, raw);
      if (decoded !== undefined) out[name] = decoded;
    }
    for (const group of options.oneofs ?? []) {
      const set = group.filter((name) => out[name] !== undefined);
      if (set.length > 1) {
        report.error(path, `only one of ${group.join(", ")} may be set, got ${set.join(" and ")}`);
      }
    }
    // Cross-field checks would only repeat a field's own error in other words (an invalid value is dropped).
    if (report.errors.length === before) options.check?.(report, path, out as Partial<T>);
    return out as Partial<T>;
  };
}

function ranged(report: ValidationReport, path: string, value: unknown, min: number, max: number) {
  const n = integerAt(report, path, value);
  if (n !== undefined && (n < min || n > max)) {
    report.error(path, `must be between ${min} and ${max}, got ${n}`);
    return undefined;
  }
  return n;
}

function snakeToCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}
