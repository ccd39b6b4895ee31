/**
 * The bounds on connections and streams of the xDS ports (15010 and 15012 share them), read once from the env
 * registry.
 *
 * @module
 */
import type { EnvSettings } from "@mesh/shared/env/env_settings";
import { GrpcAdmission, type GrpcAdmissionSettings } from "@mesh/shared/grpc/grpc_admission";

/** The variable that sets each bound, named in every refusal. */
export const XDS_ADMISSION_SETTINGS: GrpcAdmissionSettings = Object.freeze({
  maxConnections: "DISCOVERY_XDS_MAX_CONNECTIONS",
  maxConnectionsPerPeer: "DISCOVERY_XDS_MAX_CONNECTIONS_PER_PEER",
  maxStreams: "DISCOVERY_XDS_MAX_STREAMS",
  maxStreamsPerPeer: "DISCOVERY_XDS_MAX_STREAMS_PER_PEER",
  connectionRatePerPeer: "DISCOVERY_XDS_CONNECTION_RATE_PER_PEER",
});

/**
 * One admission for every xDS listener of the server, from `DISCOVERY_XDS_MAX_*`.
 *
 * @throws {RangeError} naming the variable of a bound below 1
 */
export function xdsAdmissionFromEnv(env: EnvSettings): GrpcAdmission {
  return new GrpcAdmission({
    maxConnections: env.int("DISCOVERY_XDS_MAX_CONNECTIONS"),
    maxConnectionsPerPeer: env.int("DISCOVERY_XDS_MAX_CONNECTIONS_PER_PEER"),
    maxStreams: env.int("DISCOVERY_XDS_MAX_STREAMS"),
    maxStreamsPerPeer: env.int("DISCOVERY_XDS_MAX_STREAMS_PER_PEER"),
    connectionRatePerPeer: env.int("DISCOVERY_XDS_CONNECTION_RATE_PER_PEER"),
  }, XDS_ADMISSION_SETTINGS);
}
