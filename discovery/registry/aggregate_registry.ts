import type { ServiceInstance } from "../model/endpoint.ts";
import type { Proxy } from "../model/proxy.ts";
import type { Service } from "../model/service.ts";
import { Listeners } from "./listeners.ts";
import {
  compareServices,
  type EndpointEvent,
  type ServiceDiscovery,
  type ServiceEvent,
  type ServiceRegistry,
} from "./service_registry.ts";

/** A registry was added twice under the same provider and cluster id. */
export class DuplicateRegistryError extends Error {
  /** `provider` and `clusterId` identify the registry added twice. */
  constructor(readonly provider: string, readonly clusterId: string) {
    super(`A registry for provider "${provider}" and cluster "${clusterId}" is already added`);
    this.name = "DuplicateRegistryError";
  }
}

/**
 * Every registry behind one ServiceDiscovery. Registries take precedence in the order they are added: when
 * several define the same hostname in the same namespace, the first one's Service is returned, carrying
 * `clusterAddresses` from all of them; instances are the union over all registries (one shard per cluster).
 */
export class AggregateRegistry implements ServiceDiscovery {
  readonly #registries: { registry: ServiceRegistry; unsubscribe: () => void; remote: boolean }[] = [];
  readonly #serviceListeners = new Listeners<ServiceEvent>();
  readonly #endpointListeners = new Listeners<EndpointEvent>();

  /**
   * An aggregate with no registries yet.
   *
   * @param clusterId the cluster this discovery instance runs in (`--clusterID`).
   */
  constructor(readonly clusterId: string) {}

  /**
   * Adds a registry below those already added; forwards its events. A `remote` one (another cluster's, from
   * a Secret) never holds back `hasSynced`: an unreachable remote must not keep the local cluster unready.
   */
  addRegistry(registry: ServiceRegistry, options: { readonly remote?: boolean } = {}): void {
    if (this.#registries.some((r) => sameRegistry(r.registry, registry))) {
      throw new DuplicateRegistryError(registry.provider, registry.clusterId);
    }
    const offService = registry.onServiceEvent((e) => this.#serviceListeners.emit(e));
    const offEndpoint = registry.onEndpointEvent((e) => this.#endpointListeners.emit(e));
    this.#registries.push({
      registry,
      remote: options.remote ?? false,
      unsubscribe: () => {
        offService();
        offEndpoint();
      },
    });
  }

  /** Removes a registry (a remote cluster going away); emits delete events for the services only it had. */
  removeRegistry(registry: ServiceRegistry): void {
    const index = this.#registries.findIndex((r) => r.registry === registry);
    if (index < 0) return;
    const [{ unsubscribe }] = this.#registries.splice(index, 1);
    unsubscribe();
    for (const service of registry.services()) {
      const remaining = this.getService(service.hostname, service.namespace);
      // A hostname other clusters still have loses this cluster's addresses: an update, not a delete.
      if (remaining) this.#serviceListeners.emit({ type: "update", service: remaining, previous: service });
      else this.#serviceListeners.emit({ type: "delete", service });
      this.#endpointListeners.emit({
        hostname: service.hostname,
        namespace: service.namespace,
        clusterId: registry.clusterId,
      });
    }
  }

  /** The registries in precedence order. */
  registries(): readonly ServiceRegistry[] {
    return this.#registries.map((r) => r.registry);
  }

  /**
   * Every service. A hostname+namespace that several registries define appears once, as the first registry's
   * Service with `clusterAddresses` of all; duplicates inside one registry (two ServiceEntries for one host)
   * are kept in that registry's order, for the snapshot to resolve and report.
   */
  services(): readonly Service[] {
    // Usually one registry has services: its sorted list is the answer, not rebuilt and sorted again.
    const lists = this.#registries.map(({ registry }) => ({ registry, services: registry.services() }))
      .filter((l) => l.services.length > 0);
    if (lists.length === 1 && isSorted(lists[0].services)) return lists[0].services;
    const out: Service[] = [];
    const owners = new Map<
      string,
      { registry: ServiceRegistry; index: number; addresses: Record<string, readonly string[]> }
    >();
    for (const { registry, services } of lists) {
      for (const service of services) {
        const key = `${service.namespace}/${service.hostname}`;
        const owner = owners.get(key);
        if (!owner) {
          owners.set(key, {
            registry,
            index: out.length,
            addresses: { [registry.clusterId]: service.addresses },
          });
          out.push(service);
        } else if (owner.registry === registry) {
          out.push(service);
        } else {
          owner.addresses[registry.clusterId] ??= service.addresses;
        }
      }
    }
    for (const { index, addresses } of owners.values()) {
      if (Object.keys(addresses).length > 1) {
        out[index] = Object.freeze({ ...out[index], clusterAddresses: Object.freeze(addresses) });
      }
    }
    // A stable sort keeps each registry's precedence order among equal hostname+namespace pairs.
    return out.sort(compareServices);
  }

  getService(hostname: string, namespace?: string): Service | undefined {
    for (const { registry } of this.#registries) {
      const service = registry.getService(hostname, namespace);
      if (service) return service;
    }
    return undefined;
  }

  instances(hostname: string, port?: number, namespace?: string): readonly ServiceInstance[] {
    // A service's instances usually come from one registry: its list is returned as is, not copied.
    const lists = this.#registries.map(({ registry }) => registry.instances(hostname, port, namespace))
      .filter((list) => list.length > 0);
    return lists.length === 1 ? lists[0] : lists.flat();
  }

  proxyInstances(proxy: Proxy): readonly ServiceInstance[] {
    return this.#registries.flatMap(({ registry }) => registry.proxyInstances(proxy));
  }

  /** True when every registry but the remote ones has synced (and vacuously when there are none). */
  hasSynced(): boolean {
    return this.#registries.every(({ registry, remote }) => remote || registry.hasSynced());
  }

  /** Registries (not remote) that have not synced yet, as `provider/clusterId`, for readiness messages. */
  unsyncedRegistries(): readonly string[] {
    return this.#registries.filter(({ registry, remote }) => !remote && !registry.hasSynced())
      .map(({ registry }) => `${registry.provider}/${registry.clusterId}`);
  }

  /** Subscribes to service events of every registry. */
  onServiceEvent(handler: (event: ServiceEvent) => void): () => void {
    return this.#serviceListeners.add(handler);
  }

  /** Subscribes to endpoint events of every registry. */
  onEndpointEvent(handler: (event: EndpointEvent) => void): () => void {
    return this.#endpointListeners.add(handler);
  }
}

function sameRegistry(a: ServiceRegistry, b: ServiceRegistry): boolean {
  return a === b || (a.provider === b.provider && a.clusterId === b.clusterId);
}

/** True when `services` are in `compareServices` order already. */
function isSorted(services: readonly Service[]): boolean {
  for (let i = 1; i < services.length; i++) {
    if (compareServices(services[i - 1], services[i]) > 0) return false;
  }
  return true;
}
