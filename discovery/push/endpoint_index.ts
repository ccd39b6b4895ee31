import type { EndpointEvent, ServiceDiscovery } from "../registry/service_registry.ts";
import { type EndpointShards, EndpointSnapshot, type NamespaceShards } from "./endpoint_snapshot.ts";
import { FrozenMap } from "./frozen_map.ts";
import { groupByCluster, patchOneCluster, sameClusterInstances } from "./cluster_instances.ts";

export type { EndpointShards } from "./endpoint_snapshot.ts";

/**
 * Versioned endpoints of every service, kept current by registry endpoint events, published as frozen
 * {@link EndpointSnapshot}s. Events and snapshot builds (`prime`) write it; a push reads only the snapshot it
 * was handed, so nothing a push derives from endpoints changes under it, however many events arrive meanwhile.
 */
export class EndpointIndex {
  readonly #discovery: ServiceDiscovery;
  #published = new EndpointSnapshot(new FrozenMap(), 0);
  /** The namespaces changed since the last snapshot: copies of their shards, written in place until published. */
  readonly #changed = new Map<string, Map<string, EndpointShards>>();
  #generation = 0;

  /** Goes up with every change of any service's endpoints. */
  get generation(): number {
    return this.#generation;
  }

  /** An empty index over `discovery`; a service's shards are read when primed or when an event names it. */
  constructor(discovery: ServiceDiscovery) {
    this.#discovery = discovery;
  }

  /**
   * Re-reads the endpoints an event names; returns true when they changed. A service whose endpoints are all
   * in one cluster is patched: the instances the registry hands back identical (the same frozen objects) are
   * taken as they were, and only the run between the common head and tail is compared and frozen, so an
   * event of one workload costs reference comparisons over the service's list, not a deep comparison, a
   * regrouping and a freeze of every instance.
   */
  update(event: Pick<EndpointEvent, "hostname" | "namespace">): boolean {
    const { hostname, namespace } = event;
    const previous = this.#current(hostname, namespace);
    const instances = this.#discovery.instances(hostname, undefined, namespace);
    const patched = previous === undefined ? undefined : patchOneCluster(previous.byCluster, instances);
    if (patched === "same") return false;
    if (patched?.same) {
      // Equal endpoints in new objects: kept at the same version (a cache key of equal content), no change.
      this.#write(Object.freeze({ ...previous!, byCluster: patched.byCluster }));
      return false;
    }
    const byCluster = patched?.byCluster ?? groupByCluster(instances);
    if (patched === undefined && previous && sameClusterInstances(previous.byCluster, byCluster)) {
      return false;
    }
    if (!previous && byCluster.size === 0) {
      // Known to have none, at version 0 as for a service never read: priming does not read it again on
      // every full push (thousands of services without endpoints were re-read per snapshot).
      this.#write(Object.freeze({ hostname, namespace, version: 0, byCluster }));
      return false;
    }
    this.#generation++;
    this.#write(Object.freeze({ hostname, namespace, version: (previous?.version ?? 0) + 1, byCluster }));
    return true;
  }

  /**
   * Reads the endpoints of the services the index does not know yet: a push snapshot primes every service it
   * lists before it takes its endpoint snapshot, so a new service's endpoints are there before any generator asks.
   */
  prime(services: Iterable<Pick<EndpointEvent, "hostname" | "namespace">>): void {
    for (const service of services) {
      if (!this.#current(service.hostname, service.namespace)) this.update(service);
    }
  }

  /**
   * The endpoints as of now, frozen: the last snapshot when nothing changed since, else a new one sharing the
   * shards of every namespace that did not change.
   */
  snapshot(): EndpointSnapshot {
    if (this.#changed.size === 0) return this.#published;
    const byNamespace = new Map<string, NamespaceShards>(this.#published.namespaces());
    for (const [namespace, shards] of this.#changed) byNamespace.set(namespace, new FrozenMap(shards));
    this.#changed.clear();
    this.#published = new EndpointSnapshot(new FrozenMap(byNamespace), this.#generation);
    return this.#published;
  }

  /** The current endpoints of a service (for the debug interface and tests); see {@link EndpointSnapshot}. */
  shards(hostname: string, namespace: string): EndpointShards {
    return this.snapshot().shards(hostname, namespace);
  }

  /** Every service with endpoints now, sorted by namespace then hostname. */
  all(): readonly EndpointShards[] {
    return this.snapshot().all();
  }

  #current(hostname: string, namespace: string): EndpointShards | undefined {
    return (this.#changed.get(namespace) ?? this.#published.namespace(namespace)).get(hostname);
  }

  #write(shards: EndpointShards): void {
    let changed = this.#changed.get(shards.namespace);
    if (changed === undefined) {
      changed = new Map(this.#published.namespace(shards.namespace));
      this.#changed.set(shards.namespace, changed);
    }
    changed.set(shards.hostname, shards);
  }
}
