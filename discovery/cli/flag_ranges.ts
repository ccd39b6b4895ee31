import { formatDuration } from "@mesh/shared/flags/duration";

/** The accepted range of a numeric flag; durations in nanoseconds. */
interface FlagRange {
  readonly min: number | bigint;
  /** True when `min` itself is refused (the value must be greater). */
  readonly exclusive?: boolean;
  readonly max?: number;
}

/**
 * Ranges of the numeric flags of `mesh-discovery discovery`. The type already bounds ports (uint16); these
 * refuse values that parse but mean nothing: a zero or negative keepalive, a negative size or rate.
 */
export const DISCOVERY_FLAG_RANGES: Readonly<Record<string, FlagRange>> = Object.freeze({
  keepaliveInterval: { min: 0n, exclusive: true },
  keepaliveTimeout: { min: 0n, exclusive: true },
  keepaliveMaxServerConnectionAge: { min: 0n, exclusive: true },
  resync: { min: 0n, exclusive: true },
  orchApiBurst: { min: 1, max: 1_000_000 },
  orchApiQPS: { min: 0, exclusive: true, max: 1_000_000 },
  mcpInitialConnWindowSize: { min: 1, max: 2 ** 31 - 1 },
  mcpInitialWindowSize: { min: 1, max: 2 ** 31 - 1 },
  mcpMaxMsgSize: { min: 1, max: 2 ** 31 - 1 },
  log_rotate_max_age: { min: 0 },
  log_rotate_max_backups: { min: 0 },
  log_rotate_max_size: { min: 0 },
});

/**
 * Checks every ranged flag in `flags`; throws RangeError naming the flag, its value and the accepted range.
 * Flags absent from `flags` are skipped.
 */
export function checkFlagRanges(
  flags: Readonly<Record<string, unknown>>,
  ranges: Readonly<Record<string, FlagRange>> = DISCOVERY_FLAG_RANGES,
): void {
  for (const [name, range] of Object.entries(ranges)) {
    const value = flags[name];
    if (typeof value !== "number" && typeof value !== "bigint") continue;
    const show = (v: number | bigint) => typeof v === "bigint" ? formatDuration(v) : String(v);
    const tooLow = range.exclusive ? value <= range.min : value < range.min;
    const tooHigh = range.max !== undefined && value > range.max;
    const notFinite = typeof value === "number" && !Number.isFinite(value);
    if (tooLow || tooHigh || notFinite) {
      const lower = `${range.exclusive ? "greater than" : "at least"} ${show(range.min)}`;
      const upper = range.max !== undefined ? ` and at most ${range.max}` : "";
      throw new RangeError(`Invalid --${name} "${show(value)}": expected a value ${lower}${upper}`);
    }
  }
}
