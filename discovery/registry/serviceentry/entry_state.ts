import { isDeepStrictEqual } from "node:util";
import type { Resource } from "@mesh/shared/config/resource";
import type { ServiceEntrySpec } from "@mesh/shared/config/networking/service_entry";
import type { ServiceInstance } from "../../model/endpoint.ts";
import type { Service } from "../../model/service.ts";

/**
 * One ServiceEntry as converted, with its instances kept per source so a WorkloadEntry or pod change
 * replaces only its own share: inline endpoints, each selected WorkloadEntry's, and the selected pods'.
 */
export interface EntryState {
  /** `namespace/name` of the entry. */
  readonly key: string;
  readonly resource: Resource<ServiceEntrySpec>;
  readonly services: readonly Service[];
  /** Instances of the entry's own endpoints (or of its DNS hosts). */
  readonly inline: readonly ServiceInstance[];
  /** Instances of each selected WorkloadEntry, by its name. */
  readonly workloads: Map<string, readonly ServiceInstance[]>;
  /** Instances of the selected orchestrator pods, in the pod source's order. */
  pods: readonly ServiceInstance[];
  /**
   * Keys of `workloads` in `compareNames` order, kept in place as workloads come and go; undefined until
   * first read.
   */
  sortedNames?: string[];
}

/** The order of an entry's WorkloadEntries among its instances. */
export function compareNames(a: string, b: string): number {
  return a.localeCompare(b);
}

/**
 * Sets or removes one workload's instances. Sorted names are kept in place by a binary search, not sorted
 * again: an entry selecting thousands of workloads re-sorted them all on each one's event.
 */
export function setWorkload(
  state: EntryState,
  name: string,
  instances: readonly ServiceInstance[] | undefined,
): void {
  const sorted = state.sortedNames;
  if (instances === undefined) {
    if (state.workloads.delete(name) && sorted) {
      const at = upperBound(sorted, name) - 1;
      if (sorted[at] === name) sorted.splice(at, 1);
      else state.sortedNames = undefined;
    }
    return;
  }
  if (!state.workloads.has(name) && sorted) sorted.splice(upperBound(sorted, name), 0, name);
  state.workloads.set(name, instances);
}

/** The entry's workload names in `compareNames` order (kept on the state once built). */
export function sortedNames(state: EntryState): readonly string[] {
  state.sortedNames ??= [...state.workloads.keys()].sort(compareNames);
  return state.sortedNames;
}

/**
 * The instance of `hostname` that the entry lists last before the instances of workload `name` (which it
 * holds): the previous workload's last one, else the last inline one; `null` when the workload's come first.
 */
export function instanceBefore(state: EntryState, name: string, hostname: string): ServiceInstance | null {
  const names = sortedNames(state);
  // Every workload of an entry has as many instances of a host as the entry has ports: the previous name
  // with any is in practice the one right before.
  for (let at = upperBound(names, name) - 2; at >= 0; at--) {
    const last = lastOfHost(state.workloads.get(names[at])!, hostname);
    if (last) return last;
  }
  return lastOfHost(state.inline, hostname) ?? null;
}

function lastOfHost(list: readonly ServiceInstance[], hostname: string): ServiceInstance | undefined {
  for (let i = list.length - 1; i >= 0; i--) if (list[i].service.hostname === hostname) return list[i];
  return undefined;
}

/** The index after the last name that sorts at or before `name` (where a stable sort would place it). */
function upperBound(sorted: readonly string[], name: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareNames(sorted[mid], name) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** `namespace/hostname` of every service of the entry, each once. */
export function serviceKeys(state: EntryState): string[] {
  return [...new Set(state.services.map((s) => `${s.namespace}/${s.hostname}`))];
}

/**
 * The entry's instances of `hostname` in the order a full conversion lists them: inline endpoints, then
 * WorkloadEntries by name, then pods.
 */
export function entryInstances(state: EntryState, hostname: string): readonly ServiceInstance[] {
  // An entry of this one host with inline endpoints only lists them as they are (the list never changes).
  if (
    state.workloads.size === 0 && state.pods.length === 0 &&
    state.services.every((s) => s.hostname === hostname)
  ) {
    return state.inline;
  }
  const out: ServiceInstance[] = [];
  const add = (list: readonly ServiceInstance[]) => {
    for (const instance of list) if (instance.service.hostname === hostname) out.push(instance);
  };
  add(state.inline);
  if (state.workloads.size > 0) {
    for (const name of sortedNames(state)) add(state.workloads.get(name)!);
  }
  add(state.pods);
  return out;
}

/** True when the entry has an instance of `hostname`. */
export function hasInstances(state: EntryState, hostname: string): boolean {
  const of = (list: readonly ServiceInstance[]) => list.some((i) => i.service.hostname === hostname);
  if (of(state.inline) || of(state.pods)) return true;
  for (const list of state.workloads.values()) if (of(list)) return true;
  return false;
}

/** The instances of `hostname` in `list`. */
export function instancesOfHost(
  list: readonly ServiceInstance[] | undefined,
  hostname: string,
): ServiceInstance[] {
  return (list ?? []).filter((i) => i.service.hostname === hostname);
}

/** True when two instance lists give proxies the same endpoints (services aside from their resolution). */
export function sameEndpoints(a: readonly ServiceInstance[], b: readonly ServiceInstance[]): boolean {
  if (a.length !== b.length) return false;
  // Instances of entries a change left alone are the very same objects: only the rest are compared.
  return a.every((x, i) =>
    x === b[i] ||
    x.servicePort.port === b[i].servicePort.port && x.servicePort.name === b[i].servicePort.name &&
      isDeepStrictEqual(x.endpoint, b[i].endpoint) && x.service.resolution === b[i].service.resolution
  );
}
