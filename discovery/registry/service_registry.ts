import type { Proxy } from "../model/proxy.ts";
import type { ServiceInstance } from "../model/endpoint.ts";
import type { ProviderId, Service } from "../model/service.ts";

/** A service appeared, changed or went away in a registry. */
export interface ServiceEvent {
  /** Whether the service was added, updated or deleted. */
  readonly type: "add" | "update" | "delete";
  /** The new version; for delete, the last one. */
  readonly service: Service;
  /** The version an update replaced. */
  readonly previous?: Service;
}

/** The endpoints of one service (hostname in namespace) changed in one cluster's registry. */
export interface EndpointEvent {
  /** Hostname of the service. */
  readonly hostname: string;
  /** Namespace of the service. */
  readonly namespace: string;
  /** Cluster id of the registry whose endpoints changed. */
  readonly clusterId: string;
}

/** The read side of service discovery: what the push snapshot and the debug interface ask. */
export interface ServiceDiscovery {
  /** Every service, sorted by hostname then namespace. */
  services(): readonly Service[];
  /** A service by hostname; when several namespaces define the hostname, `namespace` picks one. */
  getService(hostname: string, namespace?: string): Service | undefined;
  /**
   * Instances of a service, optionally only those of one service port (by number) and one namespace's
   * definition of the hostname.
   */
  instances(hostname: string, port?: number, namespace?: string): readonly ServiceInstance[];
  /** Instances whose endpoint address is one of the proxy's addresses (the services it implements). */
  proxyInstances(proxy: Proxy): readonly ServiceInstance[];
  /** True once the registry has delivered its initial state. */
  hasSynced(): boolean;
}

/**
 * The one interface of every service registry (Mock, ServiceEntry, and later the orchestrator): services by
 * hostname, their instances, and change events. Implementations return immutable values.
 */
export interface ServiceRegistry extends ServiceDiscovery {
  /** Which implementation this is. */
  readonly provider: ProviderId;
  /** The cluster the registry reads; every endpoint it returns carries this cluster id. */
  readonly clusterId: string;
  /** Subscribes to service changes; returns a function that unsubscribes. */
  onServiceEvent(handler: (event: ServiceEvent) => void): () => void;
  /** Subscribes to endpoint changes; returns a function that unsubscribes. */
  onEndpointEvent(handler: (event: EndpointEvent) => void): () => void;
}

/** Orders services by hostname, then namespace: the order every `services()` returns. */
export function compareServices(a: Service, b: Service): number {
  if (a.hostname !== b.hostname) return a.hostname < b.hostname ? -1 : 1;
  return a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0;
}
