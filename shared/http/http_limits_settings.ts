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
  const read = (listener: string): [number, number] => {
    const all = env.int(listener);
    const perPeer = env.int(`${listener}_PER_PEER`);
    if (perPeer > all) {
      throw new RangeError(
        `Invalid ${listener}_PER_PEER "${perPeer}": expected at most ${listener} ("${all}")`,
      );
    }
    return [all, perPeer];
  };
  const [maxConnections, maxConnectionsPerPeer] = read("DISCOVERY_HTTP_MAX_CONNECTIONS");
  const [maxRequests, maxRequestsPerPeer] = read("DISCOVERY_HTTP_MAX_REQUESTS");
  const [maxBodyBytes, maxBodyBytesPerPeer] = read("DISCOVERY_HTTP_MAX_BODY_BYTES");
  return Object.freeze({
    connections: Object.freeze({ ...DEFAULT_CONNECTION_LIMITS, maxConnections, maxConnectionsPerPeer }),
    requests: Object.freeze({ maxRequests, maxRequestsPerPeer, maxBodyBytes, maxBodyBytesPerPeer }),
  });
}
