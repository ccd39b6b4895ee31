/**
 * EDS for proxyless gRPC: the ClusterLoadAssignment of each endpoint cluster the client watches, from the
 * push snapshot's versioned endpoint index. An endpoint-only push rebuilds only the clusters of the services
 * it names.
 *
 * @module
 */
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { ServiceInstance } from "../model/endpoint.ts";
import type { Proxy } from "../model/proxy.ts";
import type { PushContext } from "../push/push_context.ts";
import { configKey, serviceKey } from "../push/push_request.ts";
import type { EndpointShards } from "../push/endpoint_index.ts";
import { GRPC_EDS_UNAFFECTED } from "./grpc_unaffected_kinds.ts";
import { grpcProxyShape } from "./grpc_shape.ts";
import {
  cacheKey,
  type GeneratedResource,
  type GenerateRequest,
  stepwise,
  type XdsGenerator,
} from "./generator.ts";
import { wantedClusters } from "./wanted_clusters.ts";
import { endpointsFingerprint, stableJson } from "./fingerprint.ts";
import { localityLbEndpoints, selectInstances } from "./locality_endpoints.ts";
import type { EnvoyObject } from "./route_match.ts";
import { type NetworkSplit, networkSplit, splitHorizon, splitKey } from "./split_horizon.ts";

/** The resolved inputs of one ClusterLoadAssignment. */
export interface EndpointsPlan {
  /**
   * Cluster name, `outbound|<port>|<subset>|<hostname>`, used as the ClusterLoadAssignment's `cluster_name`.
   */
  readonly name: string;
  /** Hostname of the service. */
  readonly hostname: string;
  /** Namespace of the service. */
  readonly namespace: string;
  /** The service port whose endpoints are listed. */
  readonly port: number;
  /** The subset's labels; absent for the whole service. */
  readonly subsetLabels?: Readonly<Record<string, string>>;
  /** `endpointsFingerprint` of the shards read. */
  readonly endpoints: string;
}

/**
 * The ClusterLoadAssignment of a plan from the shards it was planned with; with `split`, other networks'
 * endpoints are replaced by their gateways.
 */
export function clusterLoadAssignment(
  plan: EndpointsPlan,
  shards: EndpointShards,
  extra?: (instance: ServiceInstance) => EnvoyObject,
  split?: NetworkSplit,
): EnvoyObject {
  const selected = selectInstances([...shards.byCluster.values()].flat(), plan.port, plan.subsetLabels);
  const instances = split === undefined ? selected : splitHorizon(selected, split.network, split.networks);
  return { cluster_name: plan.name, endpoints: localityLbEndpoints(instances, extra) };
}

/** One endpoint cluster to send: its plan, the shards it was planned with, and what invalidates it. */
export interface PlannedEndpoints {
  /** The plan; its stable JSON is the cache key. */
  readonly plan: EndpointsPlan;
  /** The endpoint shards the plan fingerprints. */
  readonly shards: EndpointShards;
  /** Keys whose change makes the entry stale. */
  readonly dependsOn: readonly string[];
}

/**
 * The endpoint clusters a request names (every one the proxy sees for a wildcard request) among load-balanced
 * services; for an endpoint-only push, only those of the services it names. Reads the proxy's service scope,
 * the DestinationRule of each service (subset labels) and the service's current endpoint shards.
 */
export function planEndpoints(proxy: Proxy, push: PushContext, request: GenerateRequest): PlannedEndpoints[] {
  return [...eachPlannedEndpoints(proxy, push, request)];
}

/** What {@link planEndpoints} returns, one endpoint cluster per step. */
export function* eachPlannedEndpoints(
  proxy: Proxy,
  push: PushContext,
  request: GenerateRequest,
): Generator<PlannedEndpoints> {
  for (const wanted of wantedClusters(request.names, proxy, push, (s) => s.resolution === "ClientSideLB")) {
    const { service } = wanted;
    const svcKey = serviceKey(service.namespace, service.hostname);
    if (!request.full && request.configsUpdated !== undefined && !request.configsUpdated.has(svcKey)) {
      continue;
    }
    const dependsOn = [svcKey];
    let subsetLabels: Readonly<Record<string, string>> | undefined;
    if (wanted.subset !== "") {
      const rule = push.destinationRule(proxy, service);
      const subset = rule?.spec.subsets?.find((s) => s.name === wanted.subset);
      // A subset no rule defines is a cluster that does not exist: the client is told nothing of it.
      if (rule === undefined || subset === undefined) continue;
      for (const source of rule.sources) {
        dependsOn.push(configKey("DestinationRule", source.meta.namespace, source.meta.name));
      }
      subsetLabels = subset.labels ?? {};
    }
    const shards = push.endpointIndex.shards(service.hostname, service.namespace);
    const plan: EndpointsPlan = {
      name: wanted.name,
      hostname: service.hostname,
      namespace: service.namespace,
      port: wanted.port,
      ...(subsetLabels !== undefined ? { subsetLabels } : {}),
      endpoints: endpointsFingerprint(push.derived, shards),
    };
    yield { plan, shards, dependsOn };
  }
}

/** Builds the endpoints of the clusters a proxyless gRPC client watches (see `planEndpoints`). */
export const grpcEdsGenerator: XdsGenerator<PushContext> = {
  typeUrl: TYPE_URL.endpoint,
  // With mesh networks, the client's network decides which endpoints it gets (split horizon), as Envoy's.
  shapeOf: (proxy: Proxy, push: PushContext, request: GenerateRequest) => {
    const split = networkSplit(proxy, push);
    return grpcProxyShape(proxy, push, request, false) + (split ? `|${split.network}` : "");
  },
  // Each resource is named by the request and read only from its own name.
  resourcePerName: true,
  unaffectedBy: () => GRPC_EDS_UNAFFECTED,
  ...stepwise(grpcLoadAssignments),
};

/** The ClusterLoadAssignments of {@link grpcEdsGenerator}, one per step. */
function* grpcLoadAssignments(
  proxy: Proxy,
  push: PushContext,
  request: GenerateRequest,
): Generator<GeneratedResource> {
  const split = networkSplit(proxy, push);
  for (const { plan, shards, dependsOn } of eachPlannedEndpoints(proxy, push, request)) {
    yield {
      name: plan.name,
      key: cacheKey(TYPE_URL.endpoint, [stableJson({ plan, ...splitKey(split) })], dependsOn),
      build: () => clusterLoadAssignment(plan, shards, undefined, split),
    };
  }
}
