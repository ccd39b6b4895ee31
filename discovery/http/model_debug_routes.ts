import type { EnvSettings } from "@mesh/shared/env/env_settings";
import { jsonResponse } from "@mesh/shared/http/router";
import { jsonArrayResponse, jsonObjectResponse } from "@mesh/shared/http/json_stream";
import { KINDS } from "@mesh/shared/config/kinds";
import type { ConfigStore, RejectedConfig } from "../model/config_store.ts";
import type { Proxy } from "../model/proxy.ts";
import type { ServiceInstance } from "../model/endpoint.ts";
import type { AggregateRegistry } from "../registry/aggregate_registry.ts";
import type { EndpointIndex, EndpointShards } from "../push/endpoint_index.ts";
import type { PushContext } from "../push/push_context.ts";
import type { MeshNetworkIndex } from "../push/network_index.ts";
import type { DebugInterface } from "./debug_interface.ts";

/** What the model's debug paths read. Functions are called per request, so answers are always current. */
export interface ModelDebugSources {
  readonly store: ConfigStore;
  readonly registry: AggregateRegistry;
  readonly endpoints: EndpointIndex;
  /** The latest push snapshot (`snapshotStage.current()`). */
  readonly push: () => PushContext;
  /** Documents the config sources refused, and why. */
  readonly rejected: () => readonly RejectedConfig[];
  /** The mesh config in effect. */
  readonly mesh: () => unknown;
  readonly env: EnvSettings;
  /** Connected proxies, for `/debug/instancesz`; none until the xDS server provides them. */
  readonly proxies?: () => readonly Proxy[];
  /** The state of each file source (watching or lost, last load), for `/debug/configz`. */
  readonly sourceStatus?: () => unknown;
  /** Analysis messages of the last run by resource key, for `/debug/configz`; absent when analysis is off. */
  readonly analysis?: () => Readonly<Record<string, readonly unknown[]>>;
}

/**
 * Registers the debug paths of the model: registryz, configz, endpointz, endpointShardz, push_status,
 * resourcesz, instancesz, mesh, env.
 */
export function addModelDebugRoutes(debug: DebugInterface, sources: ModelDebugSources): DebugInterface {
  debug.add(
    "/debug/registryz",
    "Services of every registry, merged, with each cluster's addresses and every endpoint's cluster and network; " +
      "?namespace= filters",
    (_req, url) => {
      const namespace = url.searchParams.get("namespace");
      const networks = sources.push().networks;
      return jsonArrayResponse(
        sources.registry.services().filter((s) => !namespace || s.namespace === namespace),
        (s) => ({
          ...s,
          clusterAddresses: s.clusterAddresses ?? { [s.attributes.clusterId]: s.addresses },
          endpoints: sources.registry.instances(s.hostname, undefined, s.namespace).map(({ endpoint }) => ({
            address: endpoint.address,
            port: endpoint.endpointPort,
            cluster: endpoint.locality.clusterId,
            network: networks.networkOfEndpoint(endpoint),
          })),
        }),
      );
    },
  );
  debug.add(
    "/debug/configz",
    "Every config resource, the documents refused with the reasons, and analysis messages by resource",
    () =>
      jsonResponse({
        resources: KINDS.flatMap((k) => sources.store.list(k.kind)),
        rejected: sources.rejected(),
        ...(sources.sourceStatus && { sources: sources.sourceStatus() }),
        ...(sources.analysis && { analysis: sources.analysis() }),
      }),
  );
  debug.add(
    "/debug/endpointz",
    "Endpoints of every service, from the registries",
    () => {
      const networks = sources.push().networks;
      return jsonArrayResponse(sources.registry.services(), (s) => ({
        hostname: s.hostname,
        namespace: s.namespace,
        instances: sources.registry.instances(s.hostname, undefined, s.namespace).map((i) =>
          instanceView(i, networks)
        ),
      }));
    },
  );
  debug.add(
    "/debug/endpointShardz",
    "Versioned endpoint shards EDS pushes from: hostname → namespace → cluster → endpoints",
    () => {
      const networks = sources.push().networks;
      const byHostname = new Map<string, EndpointShards[]>();
      for (const shards of sources.endpoints.all()) {
        const list = byHostname.get(shards.hostname);
        if (list) list.push(shards);
        else byHostname.set(shards.hostname, [shards]);
      }
      return jsonObjectResponse(
        [...byHostname],
        (list) =>
          Object.fromEntries(list.map((shards) => [shards.namespace, {
            version: shards.version,
            shards: Object.fromEntries(
              [...shards.byCluster].map(([c, instances]) => [
                c,
                instances.map((i) => instanceView(i, networks)),
              ]),
            ),
          }])),
      );
    },
  );
  debug.add(
    "/debug/push_status",
    "The latest push snapshot: version, counts and the problems it found",
    () => jsonResponse(sources.push().pushStatus()),
  );
  debug.add(
    "/debug/resourcesz",
    "Config kinds this server reads, with their versions and counts",
    () =>
      jsonResponse(KINDS.map((k) => ({
        group: k.group,
        versions: k.versions,
        kind: k.kind,
        plural: k.plural,
        count: sources.store.list(k.kind).length,
      }))),
  );
  debug.add("/debug/instancesz", "Service instances of each connected proxy, by proxy id", () => {
    const networks = sources.push().networks;
    // As an object's keys: a proxy id seen twice keeps its first place and its last proxy.
    const byId = new Map((sources.proxies?.() ?? []).map((proxy) => [proxy.id, proxy]));
    return jsonObjectResponse([...byId], (proxy) =>
      sources.registry.proxyInstances(proxy).map((i) => ({
        hostname: i.service.hostname,
        namespace: i.service.namespace,
        ...instanceView(i, networks),
      })));
  });
  debug.add("/debug/mesh", "The mesh config in effect", () => jsonResponse(sources.mesh()));
  debug.add(
    "/debug/env",
    "Every environment variable this program reads, resolved, with its source",
    () => jsonResponse(sources.env.resolved()),
  );
  return debug;
}

/** An instance with its cluster and its network as the mesh networks resolve it (label, registry, CIDR). */
function instanceView(instance: ServiceInstance, networks: MeshNetworkIndex): Record<string, unknown> {
  const { endpoint } = instance;
  return {
    servicePort: instance.servicePort,
    ...endpoint,
    cluster: endpoint.locality.clusterId,
    network: networks.networkOfEndpoint(endpoint),
  };
}
