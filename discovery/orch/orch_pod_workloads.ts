/**
 * The orchestrator's pods as workloads other registries select (ServiceEntries with a workload selector,
 * `DISCOVERY_ENABLE_SERVICEENTRY_SELECT_PODS`): running pods with an IP that are ready, as WorkloadEntry-shaped
 * specs, indexed by namespace and node so that a change is news only to the namespaces it touches.
 *
 * @module
 */
import type { SelectableWorkload, WorkloadSource } from "../registry/workload_source.ts";
import { podChangesWorkload } from "./orch_changes.ts";
import { podWorkloadSpec } from "./orch_convert.ts";
import type { OrchNode, OrchPod } from "./orch_objects.ts";
import { DependencyIndex } from "./dependency_index.ts";

/** The pods the registry holds, lent as selectable workloads with news of their namespaces' changes. */
export class OrchPodWorkloads implements WorkloadSource {
  readonly #pods: ReadonlyMap<string, OrchPod>;
  readonly #node: (name: string) => OrchNode | undefined;
  readonly #listeners = new Set<(namespace: string) => void>();
  /** Pods (`ns/pod`) by their node, so a Node's locality change finds the workloads on it. */
  readonly #podsOnNode = new DependencyIndex();
  /** Pods (`ns/pod`) by namespace, so a namespace's workloads are found without a scan of every pod. */
  readonly #podsInNamespace = new DependencyIndex();

  /** Workloads over `pods` (by `ns/pod`), whose nodes `node` finds. */
  constructor(pods: ReadonlyMap<string, OrchPod>, node: (name: string) => OrchNode | undefined) {
    this.#pods = pods;
    this.#node = node;
  }

  /** The ready running pods of `namespace` with an IP, sorted by name. */
  workloads = (namespace: string): SelectableWorkload[] => {
    const out: SelectableWorkload[] = [];
    for (const key of this.#podsInNamespace.dependents(namespace)) {
      const pod = this.#pods.get(key)!;
      const spec = podWorkloadSpec(pod, this.#node);
      if (spec !== undefined) out.push({ name: pod.metadata.name, namespace, spec });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  };

  /** Calls `listener` with the namespace of every change; returns the unsubscribe. */
  onChange = (listener: (namespace: string) => void): () => void => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  /** Keeps the pod indexes by node and namespace on every event; a pod's namespace is its key's first part. */
  file(key: string, before: OrchPod | undefined, after: OrchPod | undefined): void {
    if ((before === undefined) !== (after === undefined)) {
      this.#podsInNamespace.set(
        key,
        after === undefined ? new Set() : new Set([key.slice(0, key.indexOf("/"))]),
      );
    }
    const node = after?.spec?.nodeName;
    if (before?.spec?.nodeName !== node) this.#podsOnNode.set(key, new Set(node ? [node] : []));
  }

  /** Every namespace with pods is news (after the first sync). */
  announceAll(): void {
    const namespaces = new Set([...this.#pods.values()].map((p) => p.metadata.namespace ?? "default"));
    for (const namespace of namespaces) this.#announce(namespace);
  }

  /** A pod's change is news to its namespace when it changes the pod as a workload. */
  podChanged(key: string, before: OrchPod | undefined, after: OrchPod | undefined): void {
    if (podChangesWorkload(before, after, this.#node)) this.#announce(key.slice(0, key.indexOf("/")));
  }

  /** A Node's locality change is news to the namespaces of the pods on it. */
  nodeChanged(name: string): void {
    const namespaces = new Set(
      this.#podsOnNode.dependents(name).map((pod) => pod.slice(0, pod.indexOf("/"))),
    );
    for (const namespace of namespaces) this.#announce(namespace);
  }

  #announce(namespace: string): void {
    for (const listener of [...this.#listeners]) listener(namespace);
  }
}
