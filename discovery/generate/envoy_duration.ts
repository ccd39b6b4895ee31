/**
 * Mesh config durations (`"1.5s"`, `"100ms"`) as `google.protobuf.Duration` objects for `encodeAny`.
 *
 * @module
 */
import { parseDuration } from "@mesh/shared/config/validation/durations";

/**
 * A `google.protobuf.Duration` in the object form `encodeAny` accepts (int64 seconds as a decimal string). Zero
 * parts are left out: protobufjs writes explicit zeros, and equal durations should be equal bytes.
 */
export interface DurationObject {
  readonly seconds?: string;
  readonly nanos?: number;
}

const NANOS_PER_SECOND = 1_000_000_000n;

/** The Duration of a number of nanoseconds; negative values are clamped to zero (Envoy rejects them). */
export function durationFromNanos(ns: bigint): DurationObject {
  const clamped = ns < 0n ? 0n : ns;
  const seconds = clamped / NANOS_PER_SECOND;
  const nanos = Number(clamped % NANOS_PER_SECOND);
  return { ...(seconds > 0n ? { seconds: String(seconds) } : {}), ...(nanos > 0 ? { nanos } : {}) };
}

/**
 * The Duration of a mesh duration string, or undefined when the text is absent.
 *
 * @throws {RangeError} when the text is not a duration; validated configs never contain one
 */
export function durationOf(text: string | undefined): DurationObject | undefined {
  if (text === undefined || text === "") return undefined;
  const ns = parseDuration(text);
  if (ns === undefined) {
    throw new RangeError(
      `Invalid duration "${text}": expected a number with a unit such as "1.5s" or "100ms"`,
    );
  }
  return durationFromNanos(ns);
}

/** A zero Duration: for route timeouts it means "no timeout". */
export const ZERO_DURATION: DurationObject = Object.freeze({});

/** True for a zero (or absent-part) Duration. */
export function isZeroDuration(duration: DurationObject): boolean {
  return (duration.seconds === undefined || duration.seconds === "0") && !duration.nanos;
}
