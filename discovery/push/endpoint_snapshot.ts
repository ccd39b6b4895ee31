import type { ServiceInstance } from "../model/endpoint.ts";
import { FrozenMap } from "./frozen_map.ts";

/**
 * The endpoints of one service (hostname in a namespace) at one version, grouped by the cluster that reported
 * them. Immutable: a change makes a new EndpointShards with a higher version, so `version` is a cache key.
 */
export interface EndpointShards {
  /** Hostname of the service. */
  readonly hostname: string;
  /** Namespace of the service. */
  readonly namespace: string;
  /** Increases with every change of the endpoints; starts at 1. */
  readonly version: number;
  /** Instances by cluster id, clusters sorted. */
  readonly byCluster: ReadonlyMap<string, readonly ServiceInstance[]>;
}

/** Shards by hostname, of one namespace. */
export type NamespaceShards = ReadonlyMap<string, EndpointShards>;

const NO_SHARDS: NamespaceShards = new FrozenMap();

/**
 * The endpoints of every service as one push read them: frozen, published by the {@link EndpointIndex} that
 * the registry's events write. Copy-on-write by namespace: a new snapshot shares every namespace's frozen
 * shards with the one before, except those of the namespaces that changed, so publishing costs the
 * namespaces, not the services.
 */
export class EndpointSnapshot {
  /** Goes up with every change of any service's endpoints: a key for results derived from all of them. */
  readonly generation: number;
  readonly #byNamespace: ReadonlyMap<string, NamespaceShards>;
  /** Instances by endpoint address with their place in `all()` order; worked out on first use. */
  #byAddress?: Map<string, { at: number; instance: ServiceInstance }[]>;
  #all?: readonly EndpointShards[];

  /** A snapshot of `byNamespace`, whose maps must be frozen already. */
  constructor(byNamespace: ReadonlyMap<string, NamespaceShards>, generation: number) {
    this.#byNamespace = byNamespace;
    this.generation = generation;
    Object.freeze(this);
  }

  /** The shards of one namespace, by hostname (for the index that publishes the next snapshot). */
  namespace(namespace: string): NamespaceShards {
    return this.#byNamespace.get(namespace) ?? NO_SHARDS;
  }

  /** Every namespace's shards (for the index that publishes the next snapshot). */
  namespaces(): ReadonlyMap<string, NamespaceShards> {
    return this.#byNamespace;
  }

  /** The endpoints of a service; version 0 and none for a service the index never read. */
  shards(hostname: string, namespace: string): EndpointShards {
    return this.namespace(namespace).get(hostname) ?? noShards(hostname, namespace);
  }

  /**
   * Every service with endpoints, sorted by namespace then hostname. (Services read without endpoints are
   * kept, at version 0, but not listed.)
   */
  all(): readonly EndpointShards[] {
    this.#all ??= Object.freeze(
      [...this.#byNamespace.values()].flatMap((shards) => [...shards.values()])
        .filter((s) => s.byCluster.size > 0)
        .sort((a, b) =>
          a.namespace === b.namespace
            ? a.hostname.localeCompare(b.hostname)
            : a.namespace.localeCompare(b.namespace)
        ),
    );
    return this.#all;
  }

  /**
   * The instances whose endpoint address is one of `addresses`, in the order `all()` walks them: a sidecar's
   * inbound ports. Indexed by address once per snapshot; a scan of every endpoint per sidecar was most of
   * planning its inbound clusters and listeners.
   */
  instancesAt(addresses: readonly string[]): ServiceInstance[] {
    if (this.#byAddress === undefined) {
      const map = new Map<string, { at: number; instance: ServiceInstance }[]>();
      let at = 0;
      for (const shards of this.all()) {
        for (const instances of shards.byCluster.values()) {
          for (const instance of instances) {
            const list = map.get(instance.endpoint.address);
            if (list) list.push({ at: at++, instance });
            else map.set(instance.endpoint.address, [{ at: at++, instance }]);
          }
        }
      }
      this.#byAddress = map;
    }
    const map = this.#byAddress;
    const found = [...new Set(addresses)].flatMap((address) => map.get(address) ?? []);
    if (addresses.length > 1) found.sort((a, b) => a.at - b.at);
    return found.map((entry) => entry.instance);
  }
}

/** No endpoints of a service, at version 0. */
export function noShards(hostname: string, namespace: string): EndpointShards {
  return Object.freeze({ hostname, namespace, version: 0, byCluster: NO_CLUSTERS });
}

const NO_CLUSTERS: ReadonlyMap<string, readonly ServiceInstance[]> = new FrozenMap();
