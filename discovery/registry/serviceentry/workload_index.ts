import type { WorkloadEntrySpec } from "@mesh/shared/config/networking/workload_entry";
import { selectorMatches } from "../../model/labels.ts";
import { addTo, removeFrom } from "../../model/set_map.ts";

/** A WorkloadEntry as the registry keeps it: identity and spec, for selection and debugging. */
export interface WorkloadInstance {
  /** Name of the WorkloadEntry. */
  readonly name: string;
  /** Namespace of the WorkloadEntry. */
  readonly namespace: string;
  /** The WorkloadEntry's spec as stored. */
  readonly spec: WorkloadEntrySpec;
}

interface NamespaceWorkloads {
  readonly byName: Map<string, WorkloadInstance>;
  /** `key\0value` → names of the workloads carrying that label. */
  readonly byLabel: Map<string, Set<string>>;
}

/**
 * WorkloadEntries by namespace, name and label, so a selector finds its workloads through its rarest label
 * instead of a scan of the namespace.
 */
export class WorkloadIndex {
  readonly #namespaces = new Map<string, NamespaceWorkloads>();

  /** The workload `name` of `namespace`, if known. */
  get(namespace: string, name: string): WorkloadInstance | undefined {
    return this.#namespaces.get(namespace)?.byName.get(name);
  }

  /** Adds or replaces a workload. */
  put(workload: WorkloadInstance): void {
    let ns = this.#namespaces.get(workload.namespace);
    if (ns === undefined) {
      ns = { byName: new Map(), byLabel: new Map() };
      this.#namespaces.set(workload.namespace, ns);
    }
    const previous = ns.byName.get(workload.name);
    if (previous) unindexLabels(ns, previous);
    ns.byName.set(workload.name, workload);
    for (const label of labelKeys(workload)) addTo(ns.byLabel, label, workload.name);
  }

  /** Removes a workload; returns what was removed. */
  delete(namespace: string, name: string): WorkloadInstance | undefined {
    const ns = this.#namespaces.get(namespace);
    const previous = ns?.byName.get(name);
    if (!ns || !previous) return undefined;
    unindexLabels(ns, previous);
    ns.byName.delete(name);
    if (ns.byName.size === 0) this.#namespaces.delete(namespace);
    return previous;
  }

  /** The workloads of `namespace` whose labels `selector` matches, in no particular order. */
  *select(namespace: string, selector: Readonly<Record<string, string>>): Iterable<WorkloadInstance> {
    const ns = this.#namespaces.get(namespace);
    if (!ns) return;
    let candidates: Iterable<string> = ns.byName.keys();
    let fewest = Infinity;
    for (const [key, value] of Object.entries(selector)) {
      const names = ns.byLabel.get(`${key}\0${value}`);
      if (!names) return;
      if (names.size < fewest) [candidates, fewest] = [names, names.size];
    }
    for (const name of candidates) {
      const workload = ns.byName.get(name)!;
      if (selectorMatches(selector, workload.spec.labels ?? {})) yield workload;
    }
  }

  /** The namespaces holding workloads, sorted. */
  namespaces(): string[] {
    return [...this.#namespaces.keys()].sort((a, b) => a.localeCompare(b));
  }

  /** The workloads of one namespace, sorted by name. */
  inNamespace(namespace: string): WorkloadInstance[] {
    const ns = this.#namespaces.get(namespace);
    return ns === undefined ? [] : [...ns.byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}

function labelKeys(workload: WorkloadInstance): string[] {
  return Object.entries(workload.spec.labels ?? {}).map(([key, value]) => `${key}\0${value}`);
}

function unindexLabels(ns: NamespaceWorkloads, workload: WorkloadInstance): void {
  for (const label of labelKeys(workload)) removeFrom(ns.byLabel, label, workload.name);
}
