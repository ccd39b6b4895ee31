/**
 * The bounds of the HTTP listeners, read once from the env registry.
 *
 * @module
 */
import type { EnvSettings } from "../env/env_settings.ts";
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS } from "./connection_guard.ts";
import type { RequestLimits } from "./request_admission.ts";

/** Connection and request bounds shared by every HTTP listener of a program (each listener counts its own). */
export interface HttpLimitsSettings {
  /** The guard's bounds: `DISCOVERY_HTTP_MAX_CONNECTIONS[_PER_PEER]`, the rest at their defaults. */
  readonly connections: ConnectionLimits;
  /** `DISCOVERY_HTTP_MAX_REQUESTS[_PER_PEER]` and `DISCOVERY_HTTP_MAX_BODY_BYTES[_PER_PEER]`. */
  readonly requests: RequestLimits;
}

/**
 * Reads the HTTP bounds. Each variable's range is the registry's; a per-client bound larger than its
 * listener's is refused here, since it would bound nothing.
 *
 * @throws {RangeError} naming both variables when a per-client bound exceeds the listener's
 */
export function httpLimitsFromEnv(env: EnvSettings): HttpLimitsSettings {
  // Literal names, so the settings rule's source scan (tests/settings_rule_test.ts) sees each one read.
  const [maxConnections, maxConnectionsPerPeer] = bounded(
    "DISCOVERY_HTTP_MAX_CONNECTIONS",
    env.int("DISCOVERY_HTTP_MAX_CONNECTIONS"),
    env.int("DISCOVERY_HTTP_MAX_CONNECTIONS_PER_PEER"),
  );
  const [maxRequests, maxRequestsPerPeer] = bounded(
    "DISCOVERY_HTTP_MAX_REQUESTS",
    env.int("DISCOVERY_HTTP_MAX_REQUESTS"),
    env.int("DISCOVERY_HTTP_MAX_REQUESTS_PER_PEER"),
  );
  const [maxBodyBytes, maxBodyBytesPerPeer] = bounded(
    "DISCOVERY_HTTP_MAX_BODY_BYTES",
    env.int("DISCOVERY_HTTP_MAX_BODY_BYTES"),
    env.int("DISCOVERY_HTTP_MAX_BODY_BYTES_PER_PEER"),
  );
  return Object.freeze({
    connections: Object.freeze({ ...DEFAULT_CONNECTION_LIMITS, maxConnections, maxConnectionsPerPeer }),
    requests: Object.freeze({ maxRequests, maxRequestsPerPeer, maxBodyBytes, maxBodyBytesPerPeer }),
  });
}

/** The listener's bound and the per-client one; a per-client bound above the listener's would bound nothing. */
function bounded(listener: string, all: number, perPeer: number): [number, number] {
  if (perPeer > all) {
    throw new RangeError(
      `Invalid ${listener}_PER_PEER "${perPeer}": expected at most ${listener} ("${all}")`,
    );
  }
  return [all, perPeer];
}
