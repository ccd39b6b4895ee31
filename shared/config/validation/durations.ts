import type { ValidationReport } from "./report.ts";
import { describe } from "./fields.ts";
import { parseDuration as parseGoDuration } from "../../flags/duration.ts";

/** One nanosecond, the unit of parsed durations. */
export const NANOSECOND = 1n;
/** One millisecond in nanoseconds. */
export const MILLISECOND = 1_000_000n;
/** One second in nanoseconds. */
export const SECOND = 1_000_000_000n;

// The protobuf Duration range: ±10,000 years.
const MAX_DURATION = 315_576_000_000n * SECOND + 999_999_999n;

/**
 * Parses a duration as the mesh's YAML decoder does (Go's `time.ParseDuration`): a signed sequence of
 * decimal numbers with units `ns`, `us`, `µs`, `ms`, `s`, `m`, `h`, e.g. `1.5s`, `100ms`, `1h30m`; `0` alone
 * is allowed. Returns nanoseconds, or undefined when the text is not a duration or is outside protobuf's range.
 */
export function parseDuration(text: string): bigint | undefined {
  let ns: bigint;
  try {
    ns = parseGoDuration(text);
  } catch {
    return undefined;
  }
  return ns > MAX_DURATION || ns < -MAX_DURATION ? undefined : ns;
}

/** Formats nanoseconds the short way (`1.5s`, `100ms`, `250us`, `0s`), for messages. */
export function formatDuration(ns: bigint): string {
  if (ns === 0n) return "0s";
  const sign = ns < 0n ? "-" : "";
  const abs = ns < 0n ? -ns : ns;
  for (const [unit, size] of [["s", SECOND], ["ms", MILLISECOND], ["us", 1_000n]] as const) {
    if (abs >= size) {
      const whole = abs / size;
      const frac = (abs % size).toString().padStart(size.toString().length - 1, "0").replace(/0+$/, "");
      return `${sign}${whole}${frac ? `.${frac}` : ""}${unit}`;
    }
  }
  return `${sign}${abs}ns`;
}

/** Limits a duration field must respect (all in nanoseconds). */
export interface DurationRules {
  /** Smallest allowed value, inclusive. */
  readonly min?: bigint;
  /** Largest allowed value, inclusive. */
  readonly max?: bigint;
  /** The value must be a multiple of this (e.g. MILLISECOND: "only ms precision is supported"). */
  readonly precision?: bigint;
}

/** Istio's usual rule for timeouts and intervals: at least 1ms, in whole milliseconds. */
export const MS_DURATION: DurationRules = { min: MILLISECOND, precision: MILLISECOND };

/**
 * Returns the duration at `path` in nanoseconds, recording an error when it is present but not a duration
 * string or breaks `rules`.
 */
export function durationAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  rules: DurationRules = {},
): bigint | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") {
    report.error(path, `must be a duration string such as "1.5s" or "100ms", got ${describe(value)}`);
    return undefined;
  }
  const ns = parseDuration(value);
  if (ns === undefined) {
    report.error(
      path,
      `invalid duration "${value}"; expected a number with a unit (ns, us, ms, s, m, h) such as "1.5s"`,
    );
    return undefined;
  }
  if (rules.min !== undefined && ns < rules.min) {
    report.error(path, `duration must be at least ${formatDuration(rules.min)}, got "${value}"`);
  } else if (rules.max !== undefined && ns > rules.max) {
    report.error(path, `duration must be at most ${formatDuration(rules.max)}, got "${value}"`);
  } else if (rules.precision !== undefined && ns % rules.precision !== 0n) {
    report.error(
      path,
      `only durations to ${
        formatDuration(rules.precision).replace(/^1/, "")
      } precision are supported, got "${value}"`,
    );
  }
  return ns;
}
