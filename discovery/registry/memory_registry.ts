import type { Endpoint, ServiceInstance } from "../model/endpoint.ts";
import type { Proxy } from "../model/proxy.ts";
import type { ProviderId, Service } from "../model/service.ts";
import { deepFreeze } from "../model/deep_freeze.ts";
import { Listeners } from "./listeners.ts";
import {
  compareServices,
  type EndpointEvent,
  type ServiceEvent,
  type ServiceRegistry,
} from "./service_registry.ts";

/** Options of a MemoryRegistry. */
export interface MemoryRegistryOptions {
  /** Registry implementation the services are reported as. */
  readonly provider: ProviderId;
  /** Cluster id of the registry, put on its services and endpoints. */
  readonly clusterId: string;
  /** Initial sync state; the Mock registry is synced from the start. */
  readonly synced?: boolean;
}

/**
 * A registry fed by code: services and endpoints are set through methods and kept in memory. It backs the
 * `Mock` registry (which, as in Istio 1.9, starts empty) and serves tests and embedders.
 */
export class MemoryRegistry implements ServiceRegistry {
  readonly provider: ProviderId;
  readonly clusterId: string;
  #synced: boolean;
  /** hostname → namespace → service */
  readonly #services = new Map<string, Map<string, Service>>();
  /** `namespace/hostname` → endpoints */
  readonly #endpoints = new Map<string, readonly Endpoint[]>();
  readonly #serviceListeners = new Listeners<ServiceEvent>();
  readonly #endpointListeners = new Listeners<EndpointEvent>();

  /** An empty registry; services and endpoints are added by code. */
  constructor(options: MemoryRegistryOptions) {
    this.provider = options.provider;
    this.clusterId = options.clusterId;
    this.#synced = options.synced ?? true;
  }

  /** Adds or replaces a service (keyed by hostname and namespace); emits add or update. */
  addService(service: Service): void {
    const frozen = deepFreeze(structuredClone(service));
    let byNamespace = this.#services.get(frozen.hostname);
    if (!byNamespace) this.#services.set(frozen.hostname, byNamespace = new Map());
    const previous = byNamespace.get(frozen.namespace);
    byNamespace.set(frozen.namespace, frozen);
    this.#serviceListeners.emit(
      previous ? { type: "update", service: frozen, previous } : { type: "add", service: frozen },
    );
  }

  /** Removes a service and its endpoints; emits delete (and an endpoint event when it had endpoints). */
  removeService(hostname: string, namespace: string): void {
    const byNamespace = this.#services.get(hostname);
    const service = byNamespace?.get(namespace);
    if (!byNamespace || !service) return;
    byNamespace.delete(namespace);
    if (byNamespace.size === 0) this.#services.delete(hostname);
    const hadEndpoints = this.#endpoints.delete(`${namespace}/${hostname}`);
    this.#serviceListeners.emit({ type: "delete", service });
    if (hadEndpoints) this.#endpointListeners.emit({ hostname, namespace, clusterId: this.clusterId });
  }

  /**
   * Replaces the endpoints of a service; emits an endpoint event. Each endpoint's locality cluster id is set to
   * this registry's cluster id.
   */
  setEndpoints(hostname: string, namespace: string, endpoints: readonly Endpoint[]): void {
    const stamped = endpoints.map((e) => ({ ...e, locality: { ...e.locality, clusterId: this.clusterId } }));
    this.#endpoints.set(`${namespace}/${hostname}`, deepFreeze(structuredClone(stamped)));
    this.#endpointListeners.emit({ hostname, namespace, clusterId: this.clusterId });
  }

  /** Marks the registry synced or not. */
  setSynced(synced: boolean): void {
    this.#synced = synced;
  }

  services(): readonly Service[] {
    return [...this.#services.values()].flatMap((m) => [...m.values()]).sort(compareServices);
  }

  getService(hostname: string, namespace?: string): Service | undefined {
    const byNamespace = this.#services.get(hostname);
    if (!byNamespace) return undefined;
    if (namespace !== undefined) return byNamespace.get(namespace);
    return [...byNamespace.values()].sort(compareServices)[0];
  }

  instances(hostname: string, port?: number, namespace?: string): readonly ServiceInstance[] {
    const byNamespace = this.#services.get(hostname);
    if (!byNamespace) return [];
    const out: ServiceInstance[] = [];
    for (const service of [...byNamespace.values()].sort(compareServices)) {
      if (namespace !== undefined && service.namespace !== namespace) continue;
      for (const endpoint of this.#endpoints.get(`${service.namespace}/${hostname}`) ?? []) {
        const servicePort = service.ports.find((p) => p.name === endpoint.servicePortName);
        if (!servicePort || (port !== undefined && servicePort.port !== port)) continue;
        out.push({ service, servicePort, endpoint });
      }
    }
    return out;
  }

  proxyInstances(proxy: Proxy): readonly ServiceInstance[] {
    const addresses = new Set(proxy.ipAddresses);
    return this.services().flatMap((s) =>
      this.instances(s.hostname, undefined, s.namespace).filter((i) => addresses.has(i.endpoint.address))
    );
  }

  onServiceEvent(handler: (event: ServiceEvent) => void): () => void {
    return this.#serviceListeners.add(handler);
  }

  onEndpointEvent(handler: (event: EndpointEvent) => void): () => void {
    return this.#endpointListeners.add(handler);
  }

  hasSynced(): boolean {
    return this.#synced;
  }
}

/**
 * The `--registries Mock` registry: an empty in-memory registry, always synced, as Istio 1.9's Mock registry.
 * Istio names its cluster "v2-debug"; ours uses the cluster id it is given (`--clusterID`).
 */
export function createMockRegistry(clusterId: string): MemoryRegistry {
  return new MemoryRegistry({ provider: "Mock", clusterId, synced: true });
}
