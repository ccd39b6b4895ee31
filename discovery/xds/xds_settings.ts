/**
 * The settings of the xDS server, read once from the env registry and the keepalive flags, and turned into
 * grpc-js channel options.
 *
 * @module
 */
import type { EnvSettings } from "@mesh/shared/env/env_settings";
import { DEFAULT_NAME_LIMITS } from "./name_budget.ts";
import { type GrpcKeepalive, type GrpcLimits, MAX_TIMER_MS } from "@mesh/shared/grpc/grpc_channel_options";

/** Everything the xDS server reads from the environment. Durations are milliseconds. */
export interface XdsSettings {
  /** `DISCOVERY_PUSH_THROTTLE`: pushes in flight at once; at least 1. */
  readonly pushThrottle: number;
  /** `DISCOVERY_XDS_SEND_TIMEOUT`: a send not done within this is abandoned and its stream ended. */
  readonly sendTimeoutMs: number;
  /** `DISCOVERY_ENABLE_XDS_CACHE`. */
  readonly cacheEnabled: boolean;
  /** `DISCOVERY_XDS_CACHE_SIZE`: entries; <= 0 means no bound. */
  readonly cacheSize: number;
  /** `DISCOVERY_XDS_CACHE_STATS`: count `xds_cache_reads` hits and misses. */
  readonly cacheStats: boolean;
  /** `DISCOVERY_ENABLE_CONFIG_DISTRIBUTION_TRACKING`: nonces carry the push version; acks are recorded. */
  readonly distributionTracking: boolean;
  /** `DISCOVERY_DISTRIBUTION_HISTORY_RETENTION`. */
  readonly distributionRetentionMs: number;
  /** `MESH_GPRC_MAXSTREAMS`. */
  readonly maxConcurrentStreams: number;
  /** `MESH_GPRC_MAXRECVMSGSIZE`, bytes. */
  readonly maxReceiveMessageBytes: number;
  /** `ENABLE_ADMIN_ENDPOINTS`: registers `/debug/force_disconnect`. */
  readonly adminEndpoints: boolean;
  /** `DISCOVERY_XDS_MAX_NAME_LENGTH`: longest resource name, type URL or delta version, in characters. */
  readonly maxNameLength: number;
  /** `DISCOVERY_XDS_MAX_NAMES_PER_STREAM`: most names one ADS stream may hold over all its types. */
  readonly maxNamesPerStream: number;
  /** `DISCOVERY_XDS_MAX_NAME_CHARS_PER_CONNECTION`: most characters of names the streams of a connection hold. */
  readonly maxNameCharsPerConnection: number;
}

/** The settings with the registry's defaults, for tests and embedding. */
export const DEFAULT_XDS_SETTINGS: XdsSettings = Object.freeze({
  pushThrottle: 100,
  sendTimeoutMs: 5_000,
  cacheEnabled: true,
  cacheSize: 20_000,
  cacheStats: false,
  distributionTracking: true,
  distributionRetentionMs: 60_000,
  // The reference's 100000 bounds nothing: one connection could hold that many streams of full config (about
  // 1.3 MiB each at 400 services). A proxy uses one ADS stream, or a handful without ADS.
  maxConcurrentStreams: 100,
  maxReceiveMessageBytes: 4 * 1024 * 1024,
  adminEndpoints: false,
  ...DEFAULT_NAME_LIMITS,
});

/**
 * Reads the xDS settings from the env registry.
 *
 * @throws {RangeError} when `DISCOVERY_PUSH_THROTTLE` is below 1 or `DISCOVERY_XDS_SEND_TIMEOUT` is not positive
 */
export function xdsSettingsFromEnv(env: EnvSettings): XdsSettings {
  const pushThrottle = env.int("DISCOVERY_PUSH_THROTTLE");
  if (pushThrottle < 1) {
    throw new RangeError(
      `Invalid DISCOVERY_PUSH_THROTTLE "${pushThrottle}": expected at least 1 concurrent push`,
    );
  }
  const sendTimeoutMs = env.durationMs("DISCOVERY_XDS_SEND_TIMEOUT");
  if (sendTimeoutMs <= 0) {
    throw new RangeError(
      `Invalid DISCOVERY_XDS_SEND_TIMEOUT "${sendTimeoutMs}ms": expected a positive duration such as "5s"`,
    );
  }
  return Object.freeze({
    pushThrottle,
    sendTimeoutMs,
    cacheEnabled: env.bool("DISCOVERY_ENABLE_XDS_CACHE"),
    cacheSize: env.int("DISCOVERY_XDS_CACHE_SIZE"),
    cacheStats: env.bool("DISCOVERY_XDS_CACHE_STATS"),
    distributionTracking: env.bool("DISCOVERY_ENABLE_CONFIG_DISTRIBUTION_TRACKING"),
    distributionRetentionMs: env.durationMs("DISCOVERY_DISTRIBUTION_HISTORY_RETENTION"),
    maxConcurrentStreams: env.int("MESH_GPRC_MAXSTREAMS"),
    maxReceiveMessageBytes: env.int("MESH_GPRC_MAXRECVMSGSIZE"),
    adminEndpoints: env.bool("ENABLE_ADMIN_ENDPOINTS"),
    maxNameLength: env.int("DISCOVERY_XDS_MAX_NAME_LENGTH"),
    maxNamesPerStream: env.int("DISCOVERY_XDS_MAX_NAMES_PER_STREAM"),
    maxNameCharsPerConnection: env.int("DISCOVERY_XDS_MAX_NAME_CHARS_PER_CONNECTION"),
  });
}

/** The `--keepalive*` flags. */
export interface KeepaliveOptions {
  /** `--keepaliveInterval` in milliseconds: idle time after which the peer is pinged. */
  readonly intervalMs: number;
  /**
   * `--keepaliveTimeout` in milliseconds: how long a ping may go unanswered before the connection is closed.
   */
  readonly timeoutMs: number;
  /** `--keepaliveMaxServerConnectionAge` in nanoseconds; the int64 maximum (the default) means forever. */
  readonly maxConnectionAgeNs: bigint;
}

/** The `--keepalive*` flags as the shared gRPC server takes them; the int64 maximum age means forever. */
export function grpcKeepalive(keepalive: KeepaliveOptions): GrpcKeepalive {
  const ageMs = Number(keepalive.maxConnectionAgeNs / 1_000_000n);
  return {
    intervalMs: keepalive.intervalMs,
    timeoutMs: keepalive.timeoutMs,
    ...(ageMs > 0 && ageMs <= MAX_TIMER_MS ? { maxConnectionAgeMs: ageMs } : {}),
  };
}

/** The `MESH_GPRC_*` limits as the shared gRPC server takes them (per connection). */
export function grpcLimits(
  settings: Pick<XdsSettings, "maxConcurrentStreams" | "maxReceiveMessageBytes">,
): GrpcLimits {
  return {
    maxConcurrentStreams: settings.maxConcurrentStreams,
    maxReceiveMessageBytes: settings.maxReceiveMessageBytes,
  };
}
