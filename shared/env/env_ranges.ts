/** The accepted range of a numeric variable (ints, floats; durations in milliseconds). */
export interface EnvRange {
  /** Smallest accepted value, inclusive. */
  readonly min?: number;
  /** Largest accepted value, inclusive. */
  readonly max?: number;
  /** What the value means, for the error message ("a percentage", "bytes"). */
  readonly unit?: string;
}

const INT32_MAX = 2 ** 31 - 1;

/**
 * Ranges of the numeric variables beyond their type. A variable without an entry still has one: integers,
 * floats and durations must be at least 0, and floats finite (`NaN` and `Inf` parse as floats but mean
 * nothing here). A value that would silently disable a limit (a stream cap of 0, a negative size) is refused.
 */
export const ENV_RANGES: Readonly<Record<string, EnvRange>> = Object.freeze({
  CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE: { min: 2048, max: 8192, unit: "bits" },
  CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: { min: 0, max: 100, unit: "percent" },
  MESH_GPRC_MAXRECVMSGSIZE: { min: 1, max: INT32_MAX, unit: "bytes" },
  MESH_GPRC_MAXSTREAMS: { min: 1, max: INT32_MAX, unit: "streams" },
  DISCOVERY_PUSH_THROTTLE: { min: 1, max: 100_000, unit: "concurrent pushes" },
  DISCOVERY_STATUS_BURST: { min: 1, max: 1_000_000 },
  DISCOVERY_STATUS_QPS: { min: 0.001, max: 1_000_000, unit: "per second" },
  DISCOVERY_TRACE_SAMPLING: { min: 0, max: 100, unit: "percent" },
  MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER: {
    min: 0,
    max: 7 * 24 * 3600 * 1000,
    unit: "ms, i.e. 168h (0s: never)",
  },
  DISCOVERY_XDS_CACHE_SIZE: { min: 0, max: 100_000_000, unit: "entries (0: unbounded)" },
  SECRET_GRACE_PERIOD_RATIO: { min: 0, max: 1 },
  TERMINATION_DRAIN_DURATION_SECONDS: { min: 0, max: 3600, unit: "seconds" },
});

/** Where `value` of `name` falls outside its range, the expectation to report; undefined when it is inside. */
export function outOfRange(name: string, value: number): string | undefined {
  const range = ENV_RANGES[name] ?? { min: 0 };
  if (!Number.isFinite(value)) return `a finite number${describe(range)}`;
  if ((range.min !== undefined && value < range.min) || (range.max !== undefined && value > range.max)) {
    return `a value${describe(range)}`;
  }
  return undefined;
}

function describe(range: EnvRange): string {
  const unit = range.unit ? ` ${range.unit}` : "";
  if (range.min !== undefined && range.max !== undefined) return ` from ${range.min} to ${range.max}${unit}`;
  if (range.min !== undefined) return ` of at least ${range.min}${unit}`;
  if (range.max !== undefined) return ` of at most ${range.max}${unit}`;
  return unit;
}
