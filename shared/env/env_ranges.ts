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
/** The largest AdmissionReview body the webhook accepts: a body budget below it would refuse valid reviews. */
const ADMISSION_REVIEW_BYTES = 3 * 1024 * 1024;

/**
 * Ranges of the numeric variables beyond their type. A variable without an entry still has one: integers,
 * floats and durations must be at least 0, and floats finite (`NaN` and `Inf` parse as floats but mean
 * nothing here). A value that would silently disable a limit (a stream cap of 0, a negative size) is refused.
 */
export const ENV_RANGES: Readonly<Record<string, EnvRange>> = Object.freeze({
  CASERVER_CSR_MAX_BYTES: { min: 1024, max: 1_048_576, unit: "bytes" },
  CASERVER_CSR_RATE_LIMIT_BURST: { min: 1, max: 1_000_000, unit: "requests" },
  CASERVER_CSR_RATE_LIMIT_QPS: { min: 0.001, max: 1_000_000, unit: "per second" },
  CASERVER_MAX_CONCURRENT_SIGNINGS: { min: 1, max: 1024, unit: "signings" },
  CASERVER_SIGNING_QUEUE_SIZE: { min: 0, max: 1_000_000, unit: "requests" },
  CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE: { min: 2048, max: 8192, unit: "bits" },
  CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: { min: 0, max: 100, unit: "percent" },
  MESH_DNS_PROXY_PORT: { min: 1, max: 65_535, unit: "port" },
  // The CSR jitter: past ten minutes a fleet's first certificates would wait longer than their proxies do.
  INITIAL_BACKOFF_MSEC: { min: 0, max: 600_000, unit: "milliseconds" },
  MESH_GPRC_MAXRECVMSGSIZE: { min: 1, max: INT32_MAX, unit: "bytes" },
  MESH_GPRC_MAXSTREAMS: { min: 1, max: INT32_MAX, unit: "streams" },
  // Durations in milliseconds. A push waits at least DEBOUNCE_AFTER after the last event: an hour would mean no
  // config reaches a proxy while anything changes, and past 2^31 ms timers fire at once instead.
  DISCOVERY_DEBOUNCE_AFTER: { min: 0, max: 60_000 },
  // A Lease's duration is written in whole seconds, and its retry period is a quarter of it.
  DISCOVERY_LEADER_ELECTION_TTL: { min: 1_000, max: 600_000 },
  DISCOVERY_DEBOUNCE_MAX: { min: 0, max: 600_000 },
  DISCOVERY_HTTP_MAX_BODY_BYTES: { min: ADMISSION_REVIEW_BYTES, max: 2 ** 40, unit: "bytes" },
  DISCOVERY_HTTP_MAX_BODY_BYTES_PER_PEER: { min: ADMISSION_REVIEW_BYTES, max: 2 ** 40, unit: "bytes" },
  DISCOVERY_HTTP_MAX_CONNECTIONS: { min: 1, max: 1_000_000, unit: "connections" },
  DISCOVERY_HTTP_MAX_CONNECTIONS_PER_PEER: { min: 1, max: 1_000_000, unit: "connections" },
  DISCOVERY_HTTP_MAX_REQUESTS: { min: 1, max: 1_000_000, unit: "requests" },
  DISCOVERY_HTTP_MAX_REQUESTS_PER_PEER: { min: 1, max: 1_000_000, unit: "requests" },
  DISCOVERY_PUSH_THROTTLE: { min: 1, max: 100_000, unit: "concurrent pushes" },
  DISCOVERY_STATUS_BURST: { min: 1, max: 1_000_000 },
  DISCOVERY_STATUS_QPS: { min: 0.001, max: 1_000_000, unit: "per second" },
  DISCOVERY_TRACE_SAMPLING: { min: 0, max: 100, unit: "percent" },
  DISCOVERY_XDS_MAX_CONNECTIONS: { min: 1, max: 10_000_000, unit: "connections" },
  DISCOVERY_XDS_MAX_CONNECTIONS_PER_PEER: { min: 1, max: 10_000_000, unit: "connections" },
  DISCOVERY_XDS_MAX_STREAMS: { min: 1, max: 10_000_000, unit: "streams" },
  DISCOVERY_XDS_MAX_STREAMS_PER_PEER: { min: 1, max: 10_000_000, unit: "streams" },
  DISCOVERY_XDS_CONNECTION_RATE_PER_PEER: { min: 1, max: 10_000_000, unit: "connections a minute" },
  // Durations in milliseconds; 0s never trims. Past an hour a flood's memory would stay for most of a day's
  // incidents, and a trim is cheap enough that a shorter period costs nothing measurable.
  DISCOVERY_NATIVE_HEAP_TRIM_INTERVAL: { min: 0, max: 3_600_000 },
  DISCOVERY_COLLECT_AFTER_BURST_BYTES: { min: 0, max: 2 ** 40, unit: "bytes (0: never)" },
  // Durations in milliseconds; 0s keeps the last config for as long as the directory stays empty.
  MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER: { min: 0, max: 7 * 24 * 3600 * 1000 },
  DISCOVERY_XDS_CACHE_SIZE: { min: 0, max: 100_000_000, unit: "entries (0: unbounded)" },
  DISCOVERY_XDS_MAX_NAME_LENGTH: { min: 1, max: 1_048_576, unit: "characters" },
  DISCOVERY_XDS_MAX_NAMES_PER_STREAM: { min: 1, max: 10_000_000, unit: "names" },
  DISCOVERY_XDS_MAX_NAME_CHARS_PER_CONNECTION: { min: 1, max: 1_073_741_824, unit: "characters" },
  SECRET_GRACE_PERIOD_RATIO: { min: 0, max: 1 },
  TERMINATION_DRAIN_DURATION_SECONDS: { min: 0, max: 3600, unit: "seconds" },
});

/**
 * Where `value` of `name` falls outside its range, the expectation to report; undefined when it is inside.
 * `show` writes a bound as the variable's type reads (a duration's milliseconds as `1m0s`).
 */
export function outOfRange(
  name: string,
  value: number,
  show: (bound: number) => string = String,
  noun = "a value",
): string | undefined {
  const range = ENV_RANGES[name] ?? { min: 0 };
  if (!Number.isFinite(value)) return `a finite number${describe(range, show)}`;
  if ((range.min !== undefined && value < range.min) || (range.max !== undefined && value > range.max)) {
    return `${noun}${describe(range, show)}`;
  }
  return undefined;
}

function describe(range: EnvRange, show: (bound: number) => string): string {
  const unit = range.unit ? ` ${range.unit}` : "";
  if (range.min !== undefined && range.max !== undefined) {
    return ` from ${show(range.min)} to ${show(range.max)}${unit}`;
  }
  if (range.min !== undefined) return ` of at least ${show(range.min)}${unit}`;
  if (range.max !== undefined) return ` of at most ${show(range.max)}${unit}`;
  return unit;
}
