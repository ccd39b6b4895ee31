/**
 * Go's `time.Duration` in TypeScript: an int64 count of nanoseconds, parsed from and printed in Go's format
 * (`1m0s`, `1.5s`, `2562047h47m16.854775807s`). A bigint keeps the full int64 range exact.
 */

const UNITS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  "µs": 1_000n,
  "μs": 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** Largest Go duration: 2562047h47m16.854775807s. */
export const MAX_DURATION_NS = 9_223_372_036_854_775_807n;

const MIN_DURATION_NS = -9_223_372_036_854_775_808n;

/** Parses a Go duration string (`300ms`, `-1.5h`, `2h45m`) into nanoseconds; throws RangeError when invalid. */
export function parseDuration(text: string): bigint {
  const original = text;
  let s = text;
  let negative = false;
  if (s.startsWith("-") || s.startsWith("+")) {
    negative = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") {
    throw new RangeError(`Invalid duration "${original}": expected a number with a unit such as "10s"`);
  }
  let total = 0n;
  while (s !== "") {
    const match = /^(\d*)(?:\.(\d*))?([a-zµμ]*)/.exec(s);
    if (!match || match[0] === "" || (match[1] === "" && (match[2] ?? "") === "")) {
      throw new RangeError(`Invalid duration "${original}": expected a number with a unit such as "10s"`);
    }
    const [whole, intPart, fracPart = "", unit] = match;
    if (unit === "") {
      throw new RangeError(
        `Invalid duration "${original}": missing unit; expected one of ns, us, ms, s, m, h`,
      );
    }
    const scale = UNITS[unit];
    if (scale === undefined) {
      throw new RangeError(
        `Invalid duration "${original}": unknown unit "${unit}"; expected one of ns, us, ms, s, m, h`,
      );
    }
    let value = BigInt(intPart || "0") * scale;
    if (fracPart !== "") {
      // Truncate toward zero like Go: scale the fraction by the unit, dropping digits beyond 1ns.
      value += (BigInt(fracPart) * scale) / 10n ** BigInt(fracPart.length);
    }
    total += value;
    if (total > MAX_DURATION_NS + (negative ? 1n : 0n)) {
      throw new RangeError(
        `Invalid duration "${original}": out of range; the largest is 2562047h47m16.854775807s`,
      );
    }
    s = s.slice(whole.length);
  }
  return negative ? -total : total;
}

/** Prints nanoseconds the way Go's `Duration.String` does: `0s`, `1.5µs`, `100ms`, `1m0s`, `1h0m0s`. */
export function formatDuration(ns: bigint): string {
  if (ns === 0n) return "0s";
  if (ns < MIN_DURATION_NS || ns > MAX_DURATION_NS) throw new RangeError(`Duration ${ns}ns is outside int64`);
  const negative = ns < 0n;
  const abs = negative ? -ns : ns;
  const sign = negative ? "-" : "";
  if (abs < 1_000n) return `${sign}${abs}ns`;
  if (abs < 1_000_000n) return `${sign}${fraction(abs, 1_000n)}µs`;
  if (abs < 1_000_000_000n) return `${sign}${fraction(abs, 1_000_000n)}ms`;
  const hours = abs / UNITS.h;
  const minutes = (abs % UNITS.h) / UNITS.m;
  const seconds = fraction(abs % UNITS.m, UNITS.s);
  if (hours > 0n) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0n) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}

/** `value / unit` with the remainder as a decimal fraction without trailing zeros. */
function fraction(value: bigint, unit: bigint): string {
  const whole = value / unit;
  const rest = value % unit;
  if (rest === 0n) return `${whole}`;
  const digits = unit.toString().length - 1;
  return `${whole}.${rest.toString().padStart(digits, "0").replace(/0+$/, "")}`;
}

/** Converts nanoseconds to milliseconds as a JS number (saturating for the "forever" values). */
export function durationToMs(ns: bigint): number {
  return Number(ns / 1_000_000n) + Number(ns % 1_000_000n) / 1e6;
}

/** Converts milliseconds to nanoseconds. */
export function msToDuration(ms: number): bigint {
  return BigInt(Math.round(ms * 1e6));
}
