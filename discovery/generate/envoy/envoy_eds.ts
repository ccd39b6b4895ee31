/**
 * EDS for Envoy sidecars and gateways: the ClusterLoadAssignment of each EDS cluster, by locality with
 * weights and health, each endpoint marked with its TLS mode so a cluster with automatic mTLS speaks mesh mTLS
 * only to workloads that have a sidecar (`transport_socket_matches` in CDS reads the mark).
 *
 * @module
 */
import { jsonToStruct } from "../../../proto/struct_json.ts";
import { TYPE_URL } from "../../../proto/type_urls.ts";
import type { ServiceInstance } from "../../model/endpoint.ts";
import type { Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { cacheKey, type GeneratedResource, type GenerateRequest, type XdsGenerator } from "../generator.ts";
import { stableJson } from "../fingerprint.ts";
import { clusterLoadAssignment, planEndpoints } from "../grpc_eds.ts";
import type { EnvoyObject } from "../route_match.ts";
import { TLS_MODE_METADATA } from "./upstream_tls.ts";

/** The metadata of an endpoint: its TLS mode for mesh endpoints, nothing otherwise. */
export function endpointMetadata(instance: ServiceInstance): EnvoyObject {
  if (instance.endpoint.tlsMode !== "mesh") return {};
  return {
    metadata: {
      filter_metadata: {
        [TLS_MODE_METADATA.filter]: jsonToStruct({ [TLS_MODE_METADATA.key]: TLS_MODE_METADATA.mesh }),
      },
    },
  };
}

/**
 * Builds the endpoints of the EDS clusters an Envoy proxy watches. Reads what the proxyless gRPC EDS reads
 * (scope, subsets, shards); the bytes differ (TLS-mode metadata), so the key says `envoy`.
 */
export const envoyEdsGenerator: XdsGenerator<PushContext> = {
  typeUrl: TYPE_URL.endpoint,
  generate(proxy: Proxy, push: PushContext, request: GenerateRequest): GeneratedResource[] {
    return planEndpoints(proxy, push, request).map(({ plan, shards, dependsOn }) => ({
      name: plan.name,
      key: cacheKey(TYPE_URL.endpoint, ["envoy", stableJson(plan)], dependsOn),
      build: () => clusterLoadAssignment(plan, shards, endpointMetadata),
    }));
  },
};
