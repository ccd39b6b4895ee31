/**
 * EDS for Envoy sidecars and gateways: the ClusterLoadAssignment of each EDS cluster, by locality with
 * weights and health, each endpoint marked with its TLS mode so a cluster with automatic mTLS speaks mesh mTLS
 * only to workloads that have a sidecar (`transport_socket_matches` in CDS reads the mark).
 *
 * @module
 */
import { jsonToStruct } from "@mesh/proto/struct_json";
import { TYPE_URL } from "@mesh/proto/type_urls";
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

/**
 * The filter metadata key of the proxy's telemetry filters (the reference's `istio`, which the proxy's stats
 * extension reads under that name).
 */
export const TELEMETRY_METADATA_FILTER = "istio";

/** The workload labels naming an endpoint's canonical service and revision, ours first, then Istio's. */
const CANONICAL_NAME_LABELS = ["service.mesh.io/canonical-name", "service.istio.io/canonical-name"];
const CANONICAL_REVISION_LABELS = [
  "service.mesh.io/canonical-revision",
  "service.istio.io/canonical-revision",
];

function firstLabel(labels: Readonly<Record<string, string>>, keys: readonly string[]): string {
  for (const key of keys) if (labels[key] !== undefined) return labels[key];
  return "";
}

/**
 * The metadata of an endpoint: its TLS mode for mesh endpoints and, with `telemetryLabel`
 * (`DISCOVERY_ENDPOINT_TELEMETRY_LABEL`), `workload` = `name;namespace;canonical service;canonical revision`
 * under {@link TELEMETRY_METADATA_FILTER} for endpoints with a workload name, so a client's telemetry can label
 * a server that has no sidecar or was never reached (the reference's `BuildLbEndpointMetadata`).
 */
export function endpointMetadata(instance: ServiceInstance, telemetryLabel = false): EnvoyObject {
  const { endpoint } = instance;
  const filters: EnvoyObject = {};
  if (telemetryLabel && endpoint.workloadName !== "") {
    const workload = [
      endpoint.workloadName,
      endpoint.namespace,
      firstLabel(endpoint.labels, CANONICAL_NAME_LABELS),
      firstLabel(endpoint.labels, CANONICAL_REVISION_LABELS),
    ].join(";");
    filters[TELEMETRY_METADATA_FILTER] = jsonToStruct({ workload });
  }
  if (endpoint.tlsMode === "mesh") {
    filters[TLS_MODE_METADATA.filter] = jsonToStruct({ [TLS_MODE_METADATA.key]: TLS_MODE_METADATA.mesh });
  }
  return Object.keys(filters).length === 0 ? {} : { metadata: { filter_metadata: filters } };
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
    // Process-wide, but in the key so a cache shared by snapshots built otherwise never mixes the two shapes.
    const telemetryLabel = push.endpointTelemetryLabel;
    const telemetry = telemetryLabel ? { telemetryLabel } : {};
    const metadata = (instance: ServiceInstance) => endpointMetadata(instance, telemetryLabel);
    return planEndpoints(proxy, push, request).map(({ plan, shards, dependsOn }) => {
      const locality = localityLbPlanFor(proxy, push, plan);
      return {
        name: plan.name,
        key: cacheKey(
          TYPE_URL.endpoint,
          ["envoy", stableJson({ plan, locality, ...splitKey(split), ...telemetry })],
          dependsOn,
        ),
        build: () => {
          const assignment = clusterLoadAssignment(plan, shards, metadata, split);
          return locality === undefined
            ? assignment
            : { ...assignment, endpoints: applyLocalityLb(assignment.endpoints as EnvoyObject[], locality) };
        },
      };
    });
  },
};
