import { isDeepStrictEqual } from "node:util";
import type { Logger } from "@mesh/shared/log/logger";
import type { Resource } from "@mesh/shared/config/resource";
import type { ServiceEntrySpec } from "@mesh/shared/config/networking/service_entry";
import type { WorkloadEntrySpec } from "@mesh/shared/config/networking/workload_entry";
import type { ConfigEvent, ConfigStore } from "../../model/config_store.ts";
import type { ServiceInstance } from "../../model/endpoint.ts";
import type { Proxy } from "../../model/proxy.ts";
import type { Service } from "../../model/service.ts";
import { compareByCreation } from "../../model/config_order.ts";
import { selectorMatches } from "../../model/labels.ts";
import { Listeners } from "../listeners.ts";
import type { WorkloadSource } from "../workload_source.ts";
import {
  compareServices,
  type EndpointEvent,
  type ServiceEvent,
  type ServiceRegistry,
} from "../service_registry.ts";
import { convertServices, inlineInstances, workloadInstances } from "./convert_service_entry.ts";
import {
  entryInstances,
  type EntryState,
  hasInstances,
  instanceBefore,
  instancesOfHost,
  sameEndpoints,
  serviceKeys,
  setWorkload,
} from "./entry_state.ts";
import { SelectorIndex } from "./selector_index.ts";
import { WorkloadIndex, type WorkloadInstance } from "./workload_index.ts";
import { addTo, removeFrom } from "../../model/set_map.ts";

export type { WorkloadInstance } from "./workload_index.ts";

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
  /** Converts one workload for one entry; the real conversion unless a caller observes it. */
  readonly workloadInstances?: typeof workloadInstances;
}

/** What one `namespace/hostname` looked like before a change: the service it resolves to and its instances. */
interface KeyState {
  readonly service: Service | undefined;
  readonly instances: readonly ServiceInstance[];
}

/**
 * Services from ServiceEntries, with endpoints inline or from the WorkloadEntries their workloadSelector picks
 * (same namespace). Config store events become service events (entries changed) and endpoint events
 * (instances changed, including WorkloadEntry-only changes, which touch no service).
 *
 * Changes are applied incrementally: an entry event reconverts that entry only, and a WorkloadEntry event
 * converts that workload for the entries of its namespace whose selector picks it (before or after), found
 * through indexes. Whole-registry views (`services()`, instance lists) are rebuilt on the next read of what a
 * change touched, never per event.
 */
export class ServiceEntryRegistry implements ServiceRegistry {
  readonly provider = "External" as const;
  readonly clusterId: string;
  readonly #store: ConfigStore;
  readonly #options: ServiceEntryRegistryOptions;
  readonly #convertWorkload: typeof workloadInstances;
  readonly #entries = new Map<string, EntryState>();
  /** The entries that have a workload selector, by namespace and a label their selector requires. */
  readonly #selectors = new SelectorIndex();
  /** `namespace/hostname` → keys of the entries defining it. */
  readonly #entriesByService = new Map<string, Set<string>>();
  /** Hostname → namespaces where some entry defines it. */
  readonly #namespacesByHost = new Map<string, Set<string>>();
  readonly #workloads = new WorkloadIndex();
  readonly #serviceListeners = new Listeners<ServiceEvent>((e) => this.#logError(e));
  readonly #endpointListeners = new Listeners<EndpointEvent>((e) => this.#logError(e));
  /** Every service, sorted; dropped by any entry change. */
  #services: readonly Service[] | undefined;
  /** Entries oldest first; dropped by any entry change. */
  #sortedEntries: readonly EntryState[] | undefined;
  /** `namespace/hostname` → its instances, as last read; dropped per key by the changes that touch it. */
  readonly #instances = new Map<string, readonly ServiceInstance[]>();
  /** Keys a running change touched, with their state before it. */
  #before?: Map<string, KeyState>;
  #unsubscribe?: () => void;
  #unsubscribePods?: () => void;
  readonly #workloadListeners = new Set<(namespace: string) => void>();

  /** The WorkloadEntries as workloads other registries select (orchestrator Services, with `DISCOVERY_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES`). */
  readonly workloadEntries: WorkloadSource = {
    workloads: (namespace) => this.#workloads.inNamespace(namespace),
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
    this.#convertWorkload = options.workloadInstances ?? workloadInstances;
  }

  /** Loads what the store holds and follows its events; idempotent. */
  start(): void {
    if (this.#unsubscribe) return;
    this.#unsubscribe = this.#store.onEvent((event) => this.#onConfig(event));
    this.#unsubscribePods = this.#options.pods?.onChange((namespace) =>
      this.#change(() => this.#reselectPods(namespace))
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
    // Stable sort: among services of one hostname and namespace, the oldest entry comes first and wins.
    this.#services ??= Object.freeze(
      this.#entriesOldestFirst().flatMap((e) => e.services).sort(compareServices),
    );
    return this.#services;
  }

  getService(hostname: string, namespace?: string): Service | undefined {
    if (namespace !== undefined) return this.#serviceOf(`${namespace}/${hostname}`);
    const first = this.#namespacesOf(hostname)[0];
    return first === undefined ? undefined : this.#serviceOf(`${first}/${hostname}`);
  }

  instances(hostname: string, port?: number, namespace?: string): readonly ServiceInstance[] {
    const namespaces = namespace !== undefined ? [namespace] : this.#namespacesOf(hostname);
    // The list of one namespace is returned as kept (never changed once built), not copied.
    const all = namespaces.length === 1
      ? this.#instancesOf(`${namespaces[0]}/${hostname}`)
      : namespaces.flatMap((ns) => this.#instancesOf(`${ns}/${hostname}`));
    return port === undefined ? all : all.filter((i) => i.servicePort.port === port);
  }

  /** Instances at the proxy's addresses, only of services in the proxy's namespace (as Istio). */
  proxyInstances(proxy: Proxy): readonly ServiceInstance[] {
    const addresses = new Set(proxy.ipAddresses);
    const out: ServiceInstance[] = [];
    for (const key of this.#keysInInstanceOrder()) {
      for (const i of this.#instancesOf(key)) {
        if (addresses.has(i.endpoint.address) && i.service.namespace === proxy.namespace) out.push(i);
      }
    }
    return out;
  }

  /** Every WorkloadEntry the registry knows, selected by an entry or not, sorted by namespace and name. */
  workloads(): readonly WorkloadInstance[] {
    return this.#workloads.namespaces().flatMap((ns) => this.#workloads.inNamespace(ns));
  }

  onServiceEvent(handler: (event: ServiceEvent) => void): () => void {
    return this.#serviceListeners.add(handler);
  }

  onEndpointEvent(handler: (event: EndpointEvent) => void): () => void {
    return this.#endpointListeners.add(handler);
  }

  #onConfig(event: ConfigEvent): void {
    const { kind } = event.resource.gvk;
    const { namespace, name } = event.resource.meta;
    if (kind === "ServiceEntry") {
      this.#change(() => {
        if (event.type === "delete") this.#deleteEntry(`${namespace}/${name}`);
        else this.#putEntry(event.resource as Resource<ServiceEntrySpec>);
      });
    } else if (kind === "WorkloadEntry") {
      if (event.type === "delete") this.#workloadChanged(namespace, name, undefined);
      else this.#workloadChanged(namespace, name, event.resource as Resource<WorkloadEntrySpec>);
      for (const listener of [...this.#workloadListeners]) listener(namespace);
    }
  }

  #managed(namespace: string): boolean {
    const apps = this.#options.appNamespaces;
    return apps.length === 0 || apps.includes(namespace);
  }

  #putWorkload(resource: Resource<WorkloadEntrySpec>): void {
    const { namespace, name } = resource.meta;
    if (this.#managed(namespace)) this.#workloads.put({ name, namespace, spec: resource.spec });
  }

  /**
   * A WorkloadEntry was added, changed or removed: only entries of its namespace whose selector picks it
   * before or after are touched, and only that workload's share of their instances is converted again.
   */
  #workloadChanged(namespace: string, name: string, resource: Resource<WorkloadEntrySpec> | undefined): void {
    if (!this.#managed(namespace)) return;
    const previous = this.#workloads.get(namespace, name);
    if (resource) this.#putWorkload(resource);
    else this.#workloads.delete(namespace, name);
    const current = this.#workloads.get(namespace, name);
    const changed = new Set<string>();
    const labelSets = [previous, current].flatMap((w) => (w ? [w.spec.labels ?? {}] : []));
    for (const entryKey of this.#selectors.candidates(namespace, labelSets)) {
      const state = this.#entries.get(entryKey)!;
      const selector = state.resource.spec.workloadSelector!.labels!;
      const picks = (w: WorkloadInstance | undefined) => w !== undefined && selects(selector, w);
      if (!picks(previous) && !picks(current)) continue;
      const before = state.workloads.get(name);
      const after = picks(current) ? this.#convert(state, current!) : undefined;
      setWorkload(state, name, after);
      for (const hostname of new Set(state.services.map((s) => s.hostname))) {
        const key = `${namespace}/${hostname}`;
        const [was, is] = [instancesOfHost(before, hostname), instancesOfHost(after, hostname)];
        this.#replaceWorkload(key, state, name, was, is);
        if (!sameEndpoints(was, is)) changed.add(key);
      }
    }
    for (const key of [...changed].sort()) this.#emitEndpoints(key);
  }

  /**
   * Puts workload `name`'s new instances of the key's host (`is`) in place of its old ones (`was`) in the
   * key's kept list, when there is one: a copy of the list with that one segment changed, instead of a
   * rebuild that reads every instance of every entry of the key. Where the segment cannot be placed, the list
   * is dropped and rebuilt on the next read.
   */
  #replaceWorkload(
    key: string,
    state: EntryState,
    name: string,
    was: readonly ServiceInstance[],
    is: readonly ServiceInstance[],
  ): void {
    const list = this.#instances.get(key);
    if (list === undefined || (was.length === 0 && is.length === 0)) return;
    const at = was.length > 0 ? list.indexOf(was[0]) : this.#insertionPoint(list, key, state, name);
    if (at < 0 || (was.length > 0 && list[at + was.length - 1] !== was[was.length - 1])) {
      this.#instances.delete(key);
      return;
    }
    const next = list.slice(0, at);
    for (const instance of is) next.push(instance);
    for (let i = at + was.length; i < list.length; i++) next.push(list[i]);
    // Not frozen: V8 searches and copies a frozen array on slower paths, and the next event does both.
    this.#instances.set(key, next);
  }

  /** Where a workload that had no instances of the key's host puts its first one in the key's list; -1 if unknown. */
  #insertionPoint(list: readonly ServiceInstance[], key: string, state: EntryState, name: string): number {
    const hostname = key.slice(key.indexOf("/") + 1);
    const before = instanceBefore(state, name, hostname);
    if (before !== null) {
      const at = list.indexOf(before);
      return at < 0 ? -1 : at + 1;
    }
    return this.#entriesOf(key)[0] === state ? 0 : -1;
  }

  /** Pods of the namespace changed: the selecting entries of the namespace take their pods again. */
  #reselectPods(namespace: string): void {
    for (const entryKey of this.#selectors.inNamespace(namespace)) {
      const state = this.#entries.get(entryKey)!;
      this.#touchEntry(state);
      state.pods = this.#podInstances(state);
    }
  }

  #podInstances(state: EntryState): ServiceInstance[] {
    const { namespace } = state.resource.meta;
    const selector = state.resource.spec.workloadSelector?.labels;
    if (!selector || !this.#options.pods) return [];
    return this.#options.pods.workloads(namespace)
      .filter((w) => w.namespace === namespace && selects(selector, w))
      .flatMap((w) => this.#convert(state, w));
  }

  #convert(state: EntryState, workload: WorkloadInstance): ServiceInstance[] {
    const { namespace } = state.resource.meta;
    return this.#convertWorkload(state.resource, state.services, workload.spec, {
      namespace,
      workloadName: workload.name,
      clusterId: this.clusterId,
    });
  }

  #putEntry(resource: Resource<ServiceEntrySpec>): void {
    const { namespace, name } = resource.meta;
    if (!this.#managed(namespace)) return;
    const key = `${namespace}/${name}`;
    const previous = this.#entries.get(key);
    if (previous) this.#deleteEntry(key);
    const services = convertServices(resource, {
      clusterId: this.clusterId,
      defaultExportTo: this.#options.defaultExportTo(),
    });
    const state: EntryState = {
      key,
      resource,
      services,
      inline: inlineInstances(resource, services, this.clusterId),
      workloads: new Map(),
      pods: [],
    };
    for (const serviceKey of serviceKeys(state)) this.#touch(serviceKey);
    const selector = resource.spec.workloadSelector?.labels;
    if (selector) {
      for (const w of this.#workloads.select(namespace, selector)) {
        state.workloads.set(w.name, this.#convert(state, w));
      }
      state.pods = this.#podInstances(state);
      this.#selectors.put(key, namespace, selector);
    }
    this.#entries.set(key, state);
    for (const service of state.services) {
      addTo(this.#entriesByService, `${service.namespace}/${service.hostname}`, key);
      addTo(this.#namespacesByHost, service.hostname, service.namespace);
    }
    this.#services = undefined;
    this.#sortedEntries = undefined;
  }

  #deleteEntry(key: string): void {
    const state = this.#entries.get(key);
    if (!state) return;
    this.#touchEntry(state);
    this.#entries.delete(key);
    this.#selectors.delete(key);
    for (const service of state.services) {
      const serviceKey = `${service.namespace}/${service.hostname}`;
      if (removeFrom(this.#entriesByService, serviceKey, key)) {
        removeFrom(this.#namespacesByHost, service.hostname, service.namespace);
      }
    }
    this.#services = undefined;
    this.#sortedEntries = undefined;
  }

  /** Records the state of every key of the entry before the running change alters it. */
  #touchEntry(state: EntryState): void {
    for (const key of serviceKeys(state)) this.#touch(key);
  }

  #touch(key: string): void {
    if (!this.#before || this.#before.has(key)) return;
    this.#before.set(key, { service: this.#serviceOf(key), instances: this.#instancesOf(key) });
    this.#instances.delete(key);
  }

  /** Applies a mutation and emits events for the keys it touched whose service or endpoints differ. */
  #change(mutate: () => void): void {
    const before = this.#before = new Map();
    try {
      mutate();
    } finally {
      this.#before = undefined;
    }
    const keys = [...before.keys()].sort();
    const deleted: Service[] = [];
    for (const key of keys) {
      const previous = before.get(key)!.service;
      const service = this.#serviceOf(key);
      if (service && !previous) this.#serviceListeners.emit({ type: "add", service });
      else if (service && previous && !isDeepStrictEqual(previous, service)) {
        this.#serviceListeners.emit({ type: "update", service, previous });
      } else if (!service && previous) deleted.push(previous);
    }
    for (const service of deleted) this.#serviceListeners.emit({ type: "delete", service });
    for (const key of keys) {
      if (!sameEndpoints(before.get(key)!.instances, this.#instancesOf(key))) this.#emitEndpoints(key);
    }
  }

  #emitEndpoints(key: string): void {
    const slash = key.indexOf("/");
    this.#endpointListeners.emit({
      namespace: key.slice(0, slash),
      hostname: key.slice(slash + 1),
      clusterId: this.clusterId,
    });
  }

  /** Entries defining `key`, oldest first. */
  #entriesOf(key: string): EntryState[] {
    const keys = this.#entriesByService.get(key);
    if (!keys) return [];
    const states = [...keys].map((k) => this.#entries.get(k)!);
    return states.length > 1 ? states.sort((a, b) => compareByCreation(a.resource, b.resource)) : states;
  }

  /** The service `key` resolves to: the oldest defining entry's. */
  #serviceOf(key: string): Service | undefined {
    const oldest = this.#entriesOf(key)[0];
    const hostname = key.slice(key.indexOf("/") + 1);
    return oldest?.services.find((s) => s.hostname === hostname);
  }

  #instancesOf(key: string): readonly ServiceInstance[] {
    let list = this.#instances.get(key);
    if (list === undefined) {
      const hostname = key.slice(key.indexOf("/") + 1);
      const entries = this.#entriesOf(key);
      // Frozen, once per rebuild: a reader (the endpoint index) may keep the very list (an entry's tens of
      // thousands of inline endpoints) instead of a copy.
      list = Object.freeze(
        entries.length === 1
          ? entryInstances(entries[0], hostname)
          : entries.flatMap((state) => entryInstances(state, hostname)),
      );
      this.#instances.set(key, list);
    }
    return list;
  }

  #namespacesOf(hostname: string): string[] {
    return [...this.#namespacesByHost.get(hostname) ?? []].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  #entriesOldestFirst(): readonly EntryState[] {
    this.#sortedEntries ??= [...this.#entries.values()].sort((a, b) =>
      compareByCreation(a.resource, b.resource)
    );
    return this.#sortedEntries;
  }

  /** Keys with instances, in the order a walk of the entries oldest first meets them. */
  #keysInInstanceOrder(): string[] {
    const keys = new Set<string>();
    for (const state of this.#entriesOldestFirst()) {
      for (const service of state.services) {
        const key = `${service.namespace}/${service.hostname}`;
        if (!keys.has(key) && hasInstances(state, service.hostname)) keys.add(key);
      }
    }
    return [...keys];
  }

  #logError(error: unknown): void {
    this.#options.log.error("ServiceEntry registry event handler failed", {
      error: (error as Error)?.message ?? String(error),
    });
  }
}

function selects(selector: Readonly<Record<string, string>>, workload: WorkloadInstance): boolean {
  return selectorMatches(selector, workload.spec.labels ?? {});
}
