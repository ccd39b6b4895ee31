/**
 * The grpc-js server options of one listener, built from its keepalive settings and per-connection limits, with
 * every value checked against its range.
 *
 * @module
 */

/** Keepalive and connection lifetime of a listener. Durations are milliseconds. */
export interface GrpcKeepalive {
  /** Idle time after which the server pings the peer (`--keepaliveInterval`). */
  readonly intervalMs: number;
  /** How long a ping may go unanswered before the connection is closed (`--keepaliveTimeout`). */
  readonly timeoutMs: number;
  /** Connection age after which the server sends GOAWAY (`--keepaliveMaxServerConnectionAge`); absent: forever. */
  readonly maxConnectionAgeMs?: number;
  /** Grace for in-flight streams after the maximum age; default `MAX_CONNECTION_AGE_GRACE_MS`. */
  readonly maxConnectionAgeGraceMs?: number;
  /** A connection without streams for this long is closed; absent: never. */
  readonly maxConnectionIdleMs?: number;
}

/** What one peer (one HTTP/2 connection) may hold. Absent fields take the `DEFAULT_GRPC_LIMITS` value. */
export interface GrpcLimits {
  /** Streams open at once on one connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS); more are refused. */
  readonly maxConcurrentStreams?: number;
  /** Largest message accepted from a peer, bytes; a larger one ends its stream with RESOURCE_EXHAUSTED. */
  readonly maxReceiveMessageBytes?: number;
  /** Largest message sent to a peer, bytes. */
  readonly maxSendMessageBytes?: number;
  /**
   * Memory one connection may hold in the HTTP/2 layer (queued outbound frames, header tables), megabytes,
   * handed to the session as `maxSessionMemory`. A runtime that enforces it refuses new streams of that
   * connection past it; Deno 2.9.3 was not seen to, so `maxConcurrentStreams` is the bound that holds.
   */
  readonly maxSessionMemoryMb?: number;
}

/** The grace period for in-flight streams after a connection reaches its maximum age, as in the reference. */
export const MAX_CONNECTION_AGE_GRACE_MS = 10_000;

/** Defaults of the per-connection limits: the reference's stream and message limits, 64 MiB of HTTP/2 memory. */
export const DEFAULT_GRPC_LIMITS: Readonly<Required<GrpcLimits>> = Object.freeze({
  maxConcurrentStreams: 100_000,
  maxReceiveMessageBytes: 4 * 1024 * 1024,
  maxSendMessageBytes: 2 ** 31 - 1,
  maxSessionMemoryMb: 64,
});

/** Node's timers overflow above this many milliseconds and fire at once, so longer durations mean "never". */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The largest value HTTP/2 and grpc-js accept for a count or size setting. */
const MAX_INT32 = 2 ** 31 - 1;

function checkInt(what: string, value: number, min: number, max: number, expected: string): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`Invalid gRPC ${what} "${value}": expected ${expected}`);
  }
  return value;
}

function checkDuration(what: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min) {
    throw new RangeError(`Invalid gRPC ${what} "${value}ms": expected a duration of at least ${min}ms`);
  }
  return Math.round(value);
}

/** The limits with defaults filled in, each checked. Throws RangeError naming the limit and its range. */
export function resolveGrpcLimits(limits: GrpcLimits = {}): Readonly<Required<GrpcLimits>> {
  const merged = { ...DEFAULT_GRPC_LIMITS, ...stripUndefined(limits) };
  return Object.freeze({
    maxConcurrentStreams: checkInt(
      "limit maxConcurrentStreams",
      merged.maxConcurrentStreams,
      1,
      MAX_INT32,
      `an integer from 1 to ${MAX_INT32} streams per connection`,
    ),
    maxReceiveMessageBytes: checkInt(
      "limit maxReceiveMessageBytes",
      merged.maxReceiveMessageBytes,
      1,
      MAX_INT32,
      `an integer from 1 to ${MAX_INT32} bytes`,
    ),
    maxSendMessageBytes: checkInt(
      "limit maxSendMessageBytes",
      merged.maxSendMessageBytes,
      1,
      MAX_INT32,
      `an integer from 1 to ${MAX_INT32} bytes`,
    ),
    maxSessionMemoryMb: checkInt(
      "limit maxSessionMemoryMb",
      merged.maxSessionMemoryMb,
      1,
      1024 * 1024,
      "an integer from 1 to 1048576 megabytes per connection",
    ),
  });
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The grpc-js server options for `keepalive` and `limits`. Durations past `MAX_TIMER_MS` mean "never" and are
 * left out rather than overflowing a timer.
 *
 * @throws {RangeError} naming the setting when a value is out of range
 */
export function grpcChannelOptions(
  keepalive: GrpcKeepalive | undefined,
  limits: GrpcLimits | undefined,
): Record<string, number> {
  const resolved = resolveGrpcLimits(limits);
  const options: Record<string, number> = {
    "grpc.max_concurrent_streams": resolved.maxConcurrentStreams,
    "grpc.max_receive_message_length": resolved.maxReceiveMessageBytes,
    "grpc.max_send_message_length": resolved.maxSendMessageBytes,
    "grpc-node.max_session_memory": resolved.maxSessionMemoryMb,
    // Nothing serves or reads channelz; left on, grpc-js keeps a registry entry, a call tracker and a trace per
    // connection in a process-wide table for the connection's lifetime.
    "grpc.enable_channelz": 0,
  };
  if (!keepalive) return options;
  options["grpc.keepalive_time_ms"] = Math.min(
    checkDuration("keepalive interval", keepalive.intervalMs, 1),
    MAX_TIMER_MS,
  );
  options["grpc.keepalive_timeout_ms"] = Math.min(
    checkDuration("keepalive timeout", keepalive.timeoutMs, 1),
    MAX_TIMER_MS,
  );
  options["grpc.keepalive_permit_without_calls"] = 1;
  const age = keepalive.maxConnectionAgeMs;
  if (age !== undefined && checkDuration("maximum connection age", age, 1) <= MAX_TIMER_MS) {
    options["grpc.max_connection_age_ms"] = Math.round(age);
    options["grpc.max_connection_age_grace_ms"] = Math.min(
      checkDuration(
        "maximum connection age grace",
        keepalive.maxConnectionAgeGraceMs ?? MAX_CONNECTION_AGE_GRACE_MS,
        0,
      ),
      MAX_TIMER_MS,
    );
  }
  const idle = keepalive.maxConnectionIdleMs;
  if (idle !== undefined && checkDuration("maximum connection idle time", idle, 1) <= MAX_TIMER_MS) {
    options["grpc.max_connection_idle_ms"] = Math.round(idle);
  }
  return options;
}
