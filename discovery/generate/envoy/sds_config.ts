/**
 * How Envoy sidecars fetch their mesh certificates: over SDS from the agent beside them, through the
 * bootstrap's static cluster `sds-grpc` (a Unix socket, `./etc/mesh/proxy/SDS`). `default` is the workload's
 * certificate and key, `ROOTCA` the roots it trusts.
 *
 * @module
 */
import type { EnvoyObject } from "../route_match.ts";

/** The bootstrap cluster that reaches the agent's SDS server; the agent's bootstrap defines it. */
export const SDS_CLUSTER_NAME = "sds-grpc";

/** The SDS secret holding the workload's certificate chain and private key. */
export const WORKLOAD_SECRET_NAME = "default";

/** The SDS secret holding the mesh's trusted root certificates. */
export const ROOT_SECRET_NAME = "ROOTCA";

/** An `SdsSecretConfig` naming `name`, fetched over gRPC from the agent's SDS cluster. */
export function sdsSecretConfig(name: string): EnvoyObject {
  return {
    name,
    sds_config: {
      api_config_source: {
        api_type: "GRPC",
        transport_api_version: "V3",
        grpc_services: [{ envoy_grpc: { cluster_name: SDS_CLUSTER_NAME } }],
        set_node_on_first_message_only: true,
      },
      resource_api_version: "V3",
    },
  };
}
