import { isDeepStrictEqual } from "node:util";
import type { ServiceInstance } from "../model/endpoint.ts";
import type { EndpointEvent, ServiceDiscovery } from "../registry/service_registry.ts";

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

/**
 * Versioned endpoints of every service, kept current by registry endpoint events. EDS reads it directly, so
 * an endpoint-only change needs no new PushContext. Only events and `prime` write it: reading never does, so
 * what generators derive from it cannot change while they run.
 */
export class EndpointIndex {
  readonly #discovery: ServiceDiscovery;
  readonly #shards = new Map<string, EndpointShards>();
  #generation = 0;
  /** Instances by endpoint address with their place in `all()` order, for the generation it was built at. */
  #byAddress:
    | { generation: number; map: Map<string, { at: number; instance: ServiceInstance }[]> }
    | undefined;

  /** Goes up with every change of any service's endpoints: a key for results derived from all of them. */
  get generation(): number {
    return this.#generation;
  }

  /** An empty index over `discovery`; a service's shards are read when primed or when an event names it. */
  constructor(discovery: ServiceDiscovery) {
    this.#discovery = discovery;
  }

  /** Re-reads the endpoints an event names; returns true when they changed. */
  update(event: Pick<EndpointEvent, "hostname" | "namespace">): boolean {
    const key = `${event.namespace}/${event.hostname}`;
    const previous = this.#shards.get(key);
    const byCluster = this.#read(event.hostname, event.namespace);
    if (previous && sameShards(previous.byCluster, byCluster)) return false;
    if (!previous && byCluster.size === 0) {
      // Known to have none, at version 0 as for a service never read: priming does not read it again on
      // every full push (thousands of services without endpoints were re-read per snapshot).
      this.#shards.set(
        key,
        Object.freeze({ hostname: event.hostname, namespace: event.namespace, version: 0, byCluster }),
      );
      return false;
    }
    this.#generation++;
    this.#shards.set(
      key,
      Object.freeze({
        hostname: event.hostname,
        namespace: event.namespace,
        version: (previous?.version ?? 0) + 1,
        byCluster,
      }),
    );
    return true;
  }

  /**
   * Reads the endpoints of the services the index does not know yet: a push snapshot primes every service it
   * lists, so a new service's endpoints are there before any generator asks, and none is read mid-push.
   */
  prime(services: Iterable<Pick<EndpointEvent, "hostname" | "namespace">>): void {
    for (const service of services) {
      if (!this.#shards.has(`${service.namespace}/${service.hostname}`)) this.update(service);
    }
  }

  /** The current endpoints of a service; version 0 and none for a service never primed or named by an event. */
  shards(hostname: string, namespace: string): EndpointShards {
    return this.#shards.get(`${namespace}/${hostname}`) ??
      Object.freeze({
        hostname,
        namespace,
        version: 0,
        byCluster: new Map<string, readonly ServiceInstance[]>(),
      });
  }

  /**
   * Every service with endpoints known to the index, sorted by namespace then hostname. (Services read
   * without endpoints are kept, at version 0, but not listed.)
   */
  all(): readonly EndpointShards[] {
    return [...this.#shards.values()].filter((s) => s.byCluster.size > 0)
      .sort((a, b) =>
        a.namespace === b.namespace
          ? a.hostname.localeCompare(b.hostname)
          : a.namespace.localeCompare(b.namespace)
      );
  }

  /**
   * The instances whose endpoint address is one of `addresses`, in the order `all()` walks them: a sidecar's
   * inbound ports. Indexed by address once per generation; a scan of every endpoint per sidecar was most of
   * planning its inbound clusters and listeners.
   */
  instancesAt(addresses: readonly string[]): ServiceInstance[] {
    if (this.#byAddress?.generation !== this.#generation) {
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
      this.#byAddress = { generation: this.#generation, map };
    }
    const map = this.#byAddress.map;
    const found = [...new Set(addresses)].flatMap((address) => map.get(address) ?? []);
    if (addresses.length > 1) found.sort((a, b) => a.at - b.at);
    return found.map((entry) => entry.instance);
  }

  #read(hostname: string, namespace: string): ReadonlyMap<string, readonly ServiceInstance[]> {
    const grouped = new Map<string, ServiceInstance[]>();
    for (const instance of this.#discovery.instances(hostname, undefined, namespace)) {
      const cluster = instance.endpoint.locality.clusterId;
      const list = grouped.get(cluster);
      if (list) list.push(instance);
      else grouped.set(cluster, [instance]);
    }
    return new Map(
      [...grouped.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([c, l]) => [c, Object.freeze(l)]),
    );
  }
}

function sameShards(
  a: ReadonlyMap<string, readonly ServiceInstance[]>,
  b: ReadonlyMap<string, readonly ServiceInstance[]>,
): boolean {
  if (a.size !== b.size) return false;
  for (const [cluster, list] of a) {
    const other = b.get(cluster);
    if (!other || other.length !== list.length) return false;
    for (let i = 0; i < list.length; i++) {
      if (list[i].servicePort.port !== other[i].servicePort.port) return false;
      if (!isDeepStrictEqual(list[i].endpoint, other[i].endpoint)) return false;
    }
  }
  return true;
}
