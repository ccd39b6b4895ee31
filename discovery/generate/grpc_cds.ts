/**
 * CDS for proxyless gRPC: for each service port, the cluster of the whole service and one per DestinationRule
 * subset (`outbound|port|subset|host`). Load-balanced services get EDS clusters fed over ADS; DNS services a
 * LOGICAL_DNS cluster (gRFC A37) with their first endpoint. Load balancing, circuit breakers, outlier
 * detection and connect timeout come from the merged DestinationRule policy.
 *
 * Not carried over for gRPC: TLS settings (gRPC's xDS security needs certificate providers in its bootstrap),
 * locality failover/distribution, HTTP protocol options (idle timeout, requests per connection) and TCP
 * keepalive, which gRPC does not read from CDS.
 *
 * @module
 */
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { Proxy } from "../model/proxy.ts";
import { selectorMatches } from "../model/labels.ts";
import type { Service } from "../model/service.ts";
import type { PushContext } from "../push/push_context.ts";
import { configKey, serviceKey } from "../push/push_request.ts";
import { GRPC_CDS_UNAFFECTED } from "./grpc_unaffected_kinds.ts";
import { grpcProxyShape } from "./grpc_shape.ts";
import {
  cacheKey,
  type GeneratedResource,
  type GenerateRequest,
  stepwise,
  type XdsGenerator,
} from "./generator.ts";
import { clusterLbFields } from "./cluster_lb.ts";
import { wantedClusters } from "./wanted_clusters.ts";
import { circuitBreakers, connectTimeout, outlierDetectionFields } from "./cluster_settings.ts";
import { stableJson } from "./fingerprint.ts";
import type { EnvoyObject } from "./route_match.ts";
import { type ClusterPolicy, mergeTrafficPolicy } from "./traffic_policy_merge.ts";

/** The resolved inputs of one cluster. */
export interface ClusterPlan {
  /** Cluster name, `outbound|<port>|<subset>|<hostname>`; also the EDS service name. */
  readonly name: string;
  /** The merged DestinationRule policy for the cluster's port and subset; absent when no rule applies. */
  readonly policy?: ClusterPolicy;
  /** The address a LOGICAL_DNS cluster resolves; absent for EDS clusters. */
  readonly dns?: { readonly address: string; readonly port: number };
}

/** The Cluster of a plan. */
export function cluster(plan: ClusterPlan): EnvoyObject {
  const { policy } = plan;
  const discovery: EnvoyObject = plan.dns === undefined
    ? {
      type: "EDS",
      eds_cluster_config: { eds_config: { ads: {}, resource_api_version: "V3" }, service_name: plan.name },
    }
    : {
      type: "LOGICAL_DNS",
      dns_lookup_family: "V4_ONLY",
      load_assignment: {
        cluster_name: plan.name,
        endpoints: [{
          lb_endpoints: [{
            endpoint: {
              address: { socket_address: { address: plan.dns.address, port_value: plan.dns.port } },
            },
          }],
        }],
      },
    };
  return {
    name: plan.name,
    ...discovery,
    connect_timeout: connectTimeout(policy?.connectionPool),
    ...clusterLbFields(policy?.loadBalancer),
    circuit_breakers: circuitBreakers(policy?.connectionPool),
    ...outlierDetectionFields(policy?.outlierDetection),
  };
}

/** The address of a DNS service's cluster: its first endpoint of the port (and subset); undefined if none. */
function dnsTarget(
  push: PushContext,
  service: Service,
  port: number,
  subsetLabels: Readonly<Record<string, string>> | undefined,
): { address: string; port: number } | undefined {
  const shards = push.endpointIndex.shards(service.hostname, service.namespace);
  for (const instances of shards.byCluster.values()) {
    for (const { servicePort, endpoint } of instances) {
      if (servicePort.port !== port || endpoint.address.startsWith("unix://")) continue;
      if (!selectorMatches(subsetLabels, endpoint.labels)) continue;
      return { address: endpoint.address, port: endpoint.endpointPort };
    }
  }
  return undefined;
}

/**
 * Builds the clusters a proxyless gRPC client watches. Reads the proxy's service scope, the DestinationRule
 * that applies to each service for the proxy, and, for DNS services, their endpoints.
 */
export const grpcCdsGenerator: XdsGenerator<PushContext> = {
  typeUrl: TYPE_URL.cluster,
  shapeOf: (proxy: Proxy, push: PushContext, request: GenerateRequest) =>
    grpcProxyShape(proxy, push, request, false),
  // Each resource is named by the request and read only from its own name.
  resourcePerName: true,
  unaffectedBy: () => GRPC_CDS_UNAFFECTED,
  ...stepwise(grpcClusters),
};

/** The clusters of {@link grpcCdsGenerator}, one per step. */
function* grpcClusters(
  proxy: Proxy,
  push: PushContext,
  request: GenerateRequest,
): Generator<GeneratedResource> {
  for (const { name, service, port, subset: subsetName } of wantedClusters(request.names, proxy, push)) {
    const dependsOn = [serviceKey(service.namespace, service.hostname)];
    const rule = push.destinationRule(proxy, service);
    for (const source of rule?.sources ?? []) {
      dependsOn.push(configKey("DestinationRule", source.meta.namespace, source.meta.name));
    }
    const subset = subsetName === "" ? undefined : rule?.spec.subsets?.find((s) => s.name === subsetName);
    // A subset no rule defines is a cluster that does not exist: the client is told nothing of it.
    if (subsetName !== "" && subset === undefined) continue;
    const policy = mergeTrafficPolicy(rule?.spec.trafficPolicy, subset?.trafficPolicy, port);
    let dns: ClusterPlan["dns"];
    if (service.resolution === "DNSLB") {
      dns = dnsTarget(push, service, port, subset === undefined ? undefined : subset.labels ?? {});
      if (dns === undefined) continue;
    }
    const plan: ClusterPlan = { name, ...(policy ? { policy } : {}), ...(dns ? { dns } : {}) };
    yield {
      name,
      key: cacheKey(TYPE_URL.cluster, [stableJson(plan)], dependsOn),
      build: () => cluster(plan),
    };
  }
}
