/**
 * What the conversion of each service's Endpoints read: the pods, nodes and namespaces it looked up, filed
 * under the service (`ns/service`), so that a change of one of them recomputes only the services that read it;
 * and the pods named before they were known, which the service waits for (counted and gauged, as the
 * reference's `endpoint_no_pod`).
 *
 * @module
 */
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { type ConvertContext, type ConvertedEndpoints, endpointsFromOrch } from "./orch_convert.ts";
import type { OrchEndpoints, OrchNamespace, OrchNode, OrchPod } from "./orch_objects.ts";
import { DependencyIndex } from "./dependency_index.ts";

/** Where the conversion looks up what an Endpoints object names. */
export interface EndpointLookups {
  /** The pod by `ns/pod`. */
  pod(key: string): OrchPod | undefined;
  /** The node by name. */
  node(name: string): OrchNode | undefined;
  /** The namespace by name. */
  namespace(name: string): OrchNamespace | undefined;
}

/** The services whose endpoints read each pod, node and namespace, and the pods they wait for. */
export class EndpointReads {
  readonly #lookups: EndpointLookups;
  readonly #context: ConvertContext;
  readonly #metrics: Metrics | undefined;
  /** `ns/pod` → keys (`ns/service`) of Endpoints waiting for that pod. */
  readonly #waitingOnPod = new Map<string, Set<string>>();
  /** `ns/service` by the pods (`ns/pod`, known or awaited) its endpoints' last conversion looked up. */
  readonly #podReaders = new DependencyIndex();
  /** `ns/service` by the nodes (name) its endpoints' last conversion read the locality of. */
  readonly #nodeReaders = new DependencyIndex();
  /** `ns/service` by the namespaces (name) its endpoints' last conversion read the network of. */
  readonly #namespaceReaders = new DependencyIndex();

  /** Reads through `lookups`, converts with `context`, and counts pods awaited in `metrics`. */
  constructor(lookups: EndpointLookups, context: ConvertContext, metrics?: Metrics) {
    this.#lookups = lookups;
    this.#context = context;
    this.#metrics = metrics;
  }

  /**
   * Converts the Endpoints of `key`, filing the pods, nodes and namespaces the conversion read and the pods it
   * found missing.
   */
  convert(key: string, eps: OrchEndpoints): ConvertedEndpoints {
    const pods = new Set<string>();
    const nodes = new Set<string>();
    const namespaces = new Set<string>();
    const converted = endpointsFromOrch(
      eps,
      (ns, pod) => {
        const podKey = `${ns}/${pod}`;
        pods.add(podKey);
        return this.#lookups.pod(podKey);
      },
      (node) => {
        nodes.add(node);
        return this.#lookups.node(node);
      },
      this.#context,
      (name) => {
        namespaces.add(name);
        return this.#lookups.namespace(name);
      },
    );
    this.#fileReads(key, pods, nodes, namespaces);
    for (const pod of converted.pendingPods) {
      const set = this.#waitingOnPod.get(pod) ?? new Set();
      set.add(key);
      this.#waitingOnPod.set(pod, set);
    }
    const metrics = this.#metrics;
    // The reference counts each address met before its pod, and gauges those still waiting (`endpoint_no_pod`).
    if (converted.pendingPods.length > 0) {
      metrics?.counter("discovery_orch_endpoints_with_no_pods").inc(converted.pendingPods.length);
    }
    metrics?.gauge("discovery_orch_endpoints_pending_pod").set(this.#waitingOnPod.size);
    metrics?.gauge("endpoint_no_pod").set(this.#waitingOnPod.size);
    return converted;
  }

  /** The service `key` reads nothing now (it or its Endpoints are gone). */
  forget(key: string): void {
    this.#fileReads(key, new Set(), new Set(), new Set());
  }

  /** The pod `key` is known now: nothing waits for it any more. */
  podArrived(key: string): void {
    this.#waitingOnPod.delete(key);
  }

  /** The services whose endpoints read the pod `key` (`ns/pod`). */
  readersOfPod(key: string): string[] {
    return this.#podReaders.dependents(key);
  }

  /** The services whose endpoints read the node `name`. */
  readersOfNode(name: string): string[] {
    return this.#nodeReaders.dependents(name);
  }

  /** The services whose endpoints read the namespace `name`. */
  readersOfNamespace(name: string): string[] {
    return this.#namespaceReaders.dependents(name);
  }

  #fileReads(key: string, pods: Set<string>, nodes: Set<string>, namespaces: Set<string>): void {
    this.#podReaders.set(key, pods);
    this.#nodeReaders.set(key, nodes);
    this.#namespaceReaders.set(key, namespaces);
  }
}
