import { isDeepStrictEqual } from "node:util";
import type { Logger } from "../../../shared/log/logger.ts";
import type { Resource } from "../../../shared/config/resource.ts";
import type { ServiceEntrySpec } from "../../../shared/config/networking/service_entry.ts";
import type { WorkloadEntrySpec } from "../../../shared/config/networking/workload_entry.ts";
import type { ConfigEvent, ConfigStore } from "../../model/config_store.ts";
import type { ServiceInstance } from "../../model/endpoint.ts";
import type { Proxy } from "../../model/proxy.ts";
import type { Service } from "../../model/service.ts";
import { selectorMatches } from "../../model/labels.ts";
import { compareByCreation } from "../../model/config_order.ts";
import { Listeners } from "../listeners.ts";
import type { WorkloadSource } from "../workload_source.ts";
import {
  compareServices,
  type EndpointEvent,
  type ServiceEvent,
  type ServiceRegistry,
} from "../service_registry.ts";
import { convertServices, inlineInstances, workloadInstances } from "./convert_service_entry.ts";

/** Options of the ServiceEntry registry. */
export interface ServiceEntryRegistryOptions {
  /** Cluster id stamped on every endpoint (`--clusterID`). */
  readonly clusterId: string;
  /** Namespaces whose resources count (`--appNamespace`); empty means all. */
  readonly appNamespaces: readonly string[];
  /** exportTo of entries that set none, read on every conversion (mesh `defaultServiceExportTo`). */
  readonly defaultExportTo: () => readonly string[];
  /** Logger of conversions and selection. */
  readonly log: Logger;
  /** Orchestrator pods that entries' workload selectors also pick (`DISCOVERY_ENABLE_SERVICEENTRY_SELECT_PODS`). */
  readonly pods?: WorkloadSource;
}

/** A WorkloadEntry as the registry keeps it: identity and spec, for selection and debugging. */
export interface WorkloadInstance {
  /** Name of the WorkloadEntry. */
  readonly name: string;
  /** Namespace of the WorkloadEntry. */
  readonly namespace: string;
  /** The WorkloadEntry's spec as stored. */
  readonly spec: WorkloadEntrySpec;
}

interface EntryState {
  readonly resource: Resource<ServiceEntrySpec>;
  readonly services: readonly Service[];
  readonly instances: readonly ServiceInstance[];
}

/**
 * Services from ServiceEntries, with endpoints inline or from the WorkloadEntries their workloadSelector picks
 * (same namespace). Config store events become service events (entries changed) and endpoint events
 * (instances changed, including WorkloadEntry-only changes, which touch no service).
 */
export class ServiceEntryRegistry implements ServiceRegistry {
  readonly provider = "External" as const;
  readonly clusterId: string;
  readonly #store: ConfigStore;
  readonly #options: ServiceEntryRegistryOptions;
  readonly #entries = new Map<string, EntryState>();
  /** WorkloadEntries by namespace, then name: an entry selects only workloads of its own namespace. */
  readonly #workloads = new Map<string, Map<string, WorkloadInstance>>();
  readonly #serviceListeners = new Listeners<ServiceEvent>((e) => this.#logError(e));
  readonly #endpointListeners = new Listeners<EndpointEvent>((e) => this.#logError(e));
  #services: readonly Service[] = [];
  /** `#services` by `namespace/hostname` (the first of each), as of the last change. */
  #servicesByKey = new Map<string, Service>();
  /** `namespace/hostname` → instances of every entry defining the hostname there. */
  #instances = new Map<string, readonly ServiceInstance[]>();
  #unsubscribe?: () => void;
  #unsubscribePods?: () => void;
  readonly #workloadListeners = new Set<(namespace: string) => void>();

  /** The WorkloadEntries as workloads other registries select (orchestrator Services, with `DISCOVERY_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES`). */
  readonly workloadEntries: WorkloadSource = {
    workloads: (namespace) => this.#workloadsIn(namespace),
    onChange: (listener) => {
      this.#workloadListeners.add(listener);
      return () => this.#workloadListeners.delete(listener);
    },
  };

  /** A registry over `store`; it reads nothing until started. */
  constructor(store: ConfigStore, options: ServiceEntryRegistryOptions) {
    this.#store = store;
    this.#options = options;
    this.clusterId = options.clusterId;
  }

  /** Loads what the store holds and follows its events; idempotent. */
  start(): void {
    if (this.#unsubscribe) return;
    this.#unsubscribe = this.#store.onEvent((event) => this.#onConfig(event));
    this.#unsubscribePods = this.#options.pods?.onChange((namespace) =>
      this.#change(() => this.#reselect(namespace))
    );
    this.#change(() => {
      for (const r of this.#store.list("WorkloadEntry")) this.#putWorkload(r as Resource<WorkloadEntrySpec>);
      for (const r of this.#store.list("ServiceEntry")) this.#putEntry(r as Resource<ServiceEntrySpec>);
    });
  }

  /** Stops following the store. */
  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#unsubscribePods?.();
    this.#unsubscribePods = undefined;
  }

  /** Converts every entry again, for settings read at conversion (mesh `defaultServiceExportTo`) that changed. */
  refresh(): void {
    this.#change(() => {
      for (const state of [...this.#entries.values()]) this.#putEntry(state.resource);
    });
  }

  /** Synced once started and the store has loaded its sources. */
  hasSynced(): boolean {
    return this.#unsubscribe !== undefined && this.#store.synced;
  }

  services(): readonly Service[] {
    return this.#services;
  }

  getService(hostname: string, namespace?: string): Service | undefined {
    return this.#services.find((s) =>
      s.hostname === hostname && (namespace === undefined || s.namespace === namespace)
    );
  }

  instances(hostname: string, port?: number, namespace?: string): readonly ServiceInstance[] {
    const keys = namespace !== undefined ? [`${namespace}/${hostname}`] : [
      ...new Set(
        this.#services.filter((s) => s.hostname === hostname).map((s) => `${s.namespace}/${hostname}`),
      ),
    ];
    return keys.flatMap((k) => this.#instances.get(k) ?? [])
      .filter((i) => port === undefined || i.servicePort.port === port);
  }

  /** Instances at the proxy's addresses, only of services in the proxy's namespace (as Istio). */
  proxyInstances(proxy: Proxy): readonly ServiceInstance[] {
    const addresses = new Set(proxy.ipAddresses);
    return [...this.#instances.values()].flat()
      .filter((i) => addresses.has(i.endpoint.address) && i.service.namespace === proxy.namespace);
  }

  /** Every WorkloadEntry the registry knows, selected by an entry or not, sorted by namespace and name. */
  workloads(): readonly WorkloadInstance[] {
    return [...this.#workloads.keys()].sort((a, b) => a.localeCompare(b)).flatMap((ns) =>
      this.#workloadsIn(ns)
    );
  }

  /** The WorkloadEntries of one namespace, sorted by name. */
  #workloadsIn(namespace: string): WorkloadInstance[] {
    const byName = this.#workloads.get(namespace);
    return byName === undefined ? [] : [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  onServiceEvent(handler: (event: ServiceEvent) => void): () => void {
    return this.#serviceListeners.add(handler);
  }

  onEndpointEvent(handler: (event: EndpointEvent) => void): () => void {
    return this.#endpointListeners.add(handler);
  }

  #onConfig(event: ConfigEvent): void {
    const { kind } = event.resource.gvk;
    if (kind !== "ServiceEntry" && kind !== "WorkloadEntry") return;
    this.#change(() => {
      const { namespace, name } = event.resource.meta;
      if (kind === "ServiceEntry") {
        if (event.type === "delete") this.#entries.delete(`${namespace}/${name}`);
        else this.#putEntry(event.resource as Resource<ServiceEntrySpec>);
        return;
      }
      if (event.type === "delete") this.#deleteWorkload(namespace, name);
      else this.#putWorkload(event.resource as Resource<WorkloadEntrySpec>);
      this.#reselect(namespace);
    });
    if (kind === "WorkloadEntry") {
      for (const listener of [...this.#workloadListeners]) listener(event.resource.meta.namespace);
    }
  }

  /** Only entries of the namespace that select workloads can change; their services stay as they are. */
  #reselect(namespace: string): void {
    for (const state of this.#entries.values()) {
      if (state.resource.meta.namespace === namespace && state.resource.spec.workloadSelector) {
        this.#putEntry(state.resource, state.services);
      }
    }
  }

  #managed(namespace: string): boolean {
    const apps = this.#options.appNamespaces;
    return apps.length === 0 || apps.includes(namespace);
  }

  #putWorkload(resource: Resource<WorkloadEntrySpec>): void {
    const { namespace, name } = resource.meta;
    if (!this.#managed(namespace)) return;
    let byName = this.#workloads.get(namespace);
    if (byName === undefined) {
      byName = new Map();
      this.#workloads.set(namespace, byName);
    }
    byName.set(name, { name, namespace, spec: resource.spec });
  }

  #deleteWorkload(namespace: string, name: string): void {
    const byName = this.#workloads.get(namespace);
    byName?.delete(name);
    if (byName?.size === 0) this.#workloads.delete(namespace);
  }

  #putEntry(resource: Resource<ServiceEntrySpec>, services?: readonly Service[]): void {
    const { namespace, name } = resource.meta;
    if (!this.#managed(namespace)) return;
    const converted = services ??
      convertServices(resource, {
        clusterId: this.clusterId,
        defaultExportTo: this.#options.defaultExportTo(),
      });
    const instances = [...inlineInstances(resource, converted, this.clusterId)];
    const selector = resource.spec.workloadSelector?.labels;
    if (selector) {
      const pods = this.#managed(namespace) ? this.#options.pods?.workloads(namespace) ?? [] : [];
      // Only the namespace's own workloads: all of them sorted per entry made one WorkloadEntry edit cost
      // O(entries × workloads) in a large mesh, ahead of every endpoint push.
      for (const w of [...this.#workloadsIn(namespace), ...pods]) {
        if (w.namespace !== namespace || !selectorMatches(selector, w.spec.labels ?? {})) continue;
        instances.push(
          ...workloadInstances(resource, converted, w.spec, {
            namespace,
            workloadName: w.name,
            clusterId: this.clusterId,
          }),
        );
      }
    }
    this.#entries.set(`${namespace}/${name}`, { resource, services: converted, instances });
  }

  /** Applies a mutation, rebuilds the indexes and emits events for what differs. */
  #change(mutate: () => void): void {
    const oldServices = this.#servicesByKey;
    const oldInstances = this.#instances;
    mutate();
    this.#rebuild();
    const newServices = firstByKey(this.#services);
    this.#servicesByKey = newServices;
    for (const [key, service] of newServices) {
      const previous = oldServices.get(key);
      if (!previous) this.#serviceListeners.emit({ type: "add", service });
      else if (!isDeepStrictEqual(previous, service)) {
        this.#serviceListeners.emit({ type: "update", service, previous });
      }
    }
    for (const [key, service] of oldServices) {
      if (!newServices.has(key)) this.#serviceListeners.emit({ type: "delete", service });
    }
    for (const key of new Set([...oldInstances.keys(), ...this.#instances.keys()])) {
      if (sameEndpoints(oldInstances.get(key) ?? [], this.#instances.get(key) ?? [])) continue;
      const slash = key.indexOf("/");
      this.#endpointListeners.emit({
        namespace: key.slice(0, slash),
        hostname: key.slice(slash + 1),
        clusterId: this.clusterId,
      });
    }
  }

  #rebuild(): void {
    const entries = [...this.#entries.values()].sort((a, b) => compareByCreation(a.resource, b.resource));
    // Stable sort: among services of one hostname and namespace, the oldest entry comes first and wins.
    this.#services = Object.freeze(entries.flatMap((e) => e.services).sort(compareServices));
    const instances = new Map<string, ServiceInstance[]>();
    for (const entry of entries) {
      for (const instance of entry.instances) {
        const key = `${instance.service.namespace}/${instance.service.hostname}`;
        const list = instances.get(key);
        if (list) list.push(instance);
        else instances.set(key, [instance]);
      }
    }
    this.#instances = instances;
  }

  #logError(error: unknown): void {
    this.#options.log.error("ServiceEntry registry event handler failed", {
      error: (error as Error)?.message ?? String(error),
    });
  }
}

function firstByKey(services: readonly Service[]): Map<string, Service> {
  const out = new Map<string, Service>();
  for (const s of services) {
    const key = `${s.namespace}/${s.hostname}`;
    if (!out.has(key)) out.set(key, s);
  }
  return out;
}

function sameEndpoints(a: readonly ServiceInstance[], b: readonly ServiceInstance[]): boolean {
  if (a.length !== b.length) return false;
  // Instances of entries a change left alone are the very same objects: only the rest are compared.
  return a.every((x, i) =>
    x === b[i] ||
    x.servicePort.port === b[i].servicePort.port && x.servicePort.name === b[i].servicePort.name &&
      isDeepStrictEqual(x.endpoint, b[i].endpoint) && x.service.resolution === b[i].service.resolution
  );
}
