import { isDeepStrictEqual } from "node:util";
import type { Resource } from "../../../shared/config/resource.ts";
import type { ServiceEntrySpec } from "../../../shared/config/networking/service_entry.ts";
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
  /** Keys of `workloads`, sorted; undefined when a workload came or went since they were sorted. */
  sortedNames?: readonly string[];
}

/** Sets or removes one workload's instances, keeping the sorted names current. */
export function setWorkload(
  state: EntryState,
  name: string,
  instances: readonly ServiceInstance[] | undefined,
): void {
  if (instances === undefined) {
    if (state.workloads.delete(name)) state.sortedNames = undefined;
    return;
  }
  if (!state.workloads.has(name)) state.sortedNames = undefined;
  state.workloads.set(name, instances);
}

/** `namespace/hostname` of every service of the entry, each once. */
export function serviceKeys(state: EntryState): string[] {
  return [...new Set(state.services.map((s) => `${s.namespace}/${s.hostname}`))];
}

/**
 * The entry's instances of `hostname` in the order a full conversion lists them: inline endpoints, then
 * WorkloadEntries by name, then pods.
 */
export function entryInstances(state: EntryState, hostname: string): ServiceInstance[] {
  const out: ServiceInstance[] = [];
  const add = (list: readonly ServiceInstance[]) => {
    for (const instance of list) if (instance.service.hostname === hostname) out.push(instance);
  };
  add(state.inline);
  if (state.workloads.size > 0) {
    state.sortedNames ??= [...state.workloads.keys()].sort((a, b) => a.localeCompare(b));
    for (const name of state.sortedNames) add(state.workloads.get(name)!);
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
