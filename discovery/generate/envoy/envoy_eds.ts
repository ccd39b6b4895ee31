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
import { clusterLoadAssignment, type EndpointsPlan, planEndpoints } from "../grpc_eds.ts";
import { mergeTrafficPolicy } from "../traffic_policy_merge.ts";
import { applyLocalityLb, type LocalityLbPlan } from "./locality_lb.ts";
import { envoyProxyShape } from "./envoy_shape.ts";
import type { EnvoyObject } from "../route_match.ts";
import { TLS_MODE_METADATA } from "./upstream_tls.ts";
import { networkSplit, splitKey } from "../split_horizon.ts";
import { edsUnaffectedBy } from "./unaffected_kinds.ts";

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
 * The locality load balancing of one cluster for `proxy`, when it applies: the proxy knows its locality, and
 * the cluster's DestinationRule (else the mesh) enables it. Failover priorities need outlier detection on the
 * cluster; a `distribute` rule does not.
 */
export function localityLbPlanFor(
  proxy: Proxy,
  push: PushContext,
  plan: EndpointsPlan,
): LocalityLbPlan | undefined {
  const locality = proxy.locality;
  if (locality === undefined) return undefined;
  const service = push.serviceForHostname(proxy, plan.hostname);
  const rule = service === undefined ? undefined : push.destinationRule(proxy, service);
  const subsetName = plan.name.split("|")[2] ?? "";
  const subset = subsetName === "" ? undefined : rule?.spec.subsets?.find((s) => s.name === subsetName);
  const policy = mergeTrafficPolicy(rule?.spec.trafficPolicy, subset?.trafficPolicy, plan.port);
  const setting = policy?.loadBalancer?.localityLbSetting ?? push.mesh.localityLbSetting;
  if (setting === undefined || setting.enabled === false) return undefined;
  const distributes = (setting.distribute ?? []).length > 0;
  if (!distributes && policy?.outlierDetection === undefined) return undefined;
  const proxyLocality = [locality.region ?? "", locality.zone ?? "", locality.subZone ?? ""].join("/");
  return { proxyLocality, setting };
}

/**
 * Builds the endpoints of the EDS clusters an Envoy proxy watches. Reads what the proxyless gRPC EDS reads
 * (scope, subsets, shards) and, for locality load balancing, the proxy's locality and the cluster's merged
 * DestinationRule policy; the bytes differ (TLS-mode metadata), so the key says `envoy`.
 */
export const envoyEdsGenerator: XdsGenerator<PushContext> = {
  typeUrl: TYPE_URL.endpoint,
  unaffectedBy: edsUnaffectedBy,
  // With mesh networks, the proxy's network decides which endpoints it gets (split horizon).
  shapeOf: (proxy, push) => {
    const split = networkSplit(proxy, push);
    return envoyProxyShape(proxy, push, { locality: true }) + (split ? `|${split.network}` : "");
  },
  generate(proxy: Proxy, push: PushContext, request: GenerateRequest): GeneratedResource[] {
    const split = networkSplit(proxy, push);
    return planEndpoints(proxy, push, request).map(({ plan, shards, dependsOn }) => {
      const locality = localityLbPlanFor(proxy, push, plan);
      return {
        name: plan.name,
        key: cacheKey(
          TYPE_URL.endpoint,
          ["envoy", stableJson({ plan, locality, ...splitKey(split) })],
          dependsOn,
        ),
        build: () => {
          const assignment = clusterLoadAssignment(plan, shards, endpointMetadata, split);
          return locality === undefined
            ? assignment
            : { ...assignment, endpoints: applyLocalityLb(assignment.endpoints as EnvoyObject[], locality) };
        },
      };
    });
  },
};
