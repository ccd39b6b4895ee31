/**
 * The orchestrator as a service registry: informers (list, then watch from the listed resource version,
 * relisting on 410 Gone and reconnecting when a watch drops) over Services, Endpoints, Pods and Nodes, turned
 * into model services and endpoints in a `MemoryRegistry` that the aggregate registry reads.
 *
 * Changes are incremental: an Endpoints or Pod change recomputes the endpoints of the services it touches
 * (an endpoint event: EDS only), a Service change replaces that one service. The registry reports synced once
 * every informer has delivered its first full list.
 *
 * @module
 */
import * as k8s from "@kubernetes/client-node";
import type { Logger } from "../../shared/log/logger.ts";
import type { Metrics } from "../../shared/metrics/metrics.ts";
import { MemoryRegistry } from "../registry/memory_registry.ts";
import type { ServiceRegistry } from "../registry/service_registry.ts";
import { type ConvertContext, endpointsFromOrch, serviceFromOrch, serviceHostname } from "./orch_convert.ts";
import type { OrchEndpoints, OrchNode, OrchPod, OrchService } from "./orch_objects.ts";
import type { RateLimiter } from "./orch_client.ts";
import { type RunningInformer, startInformer } from "./resilient_informer.ts";

/** What the orchestrator registry needs. */
export interface OrchRegistryOptions extends ConvertContext {
  /** The client configuration. */
  readonly kubeConfig: k8s.KubeConfig;
  /** Bounds list calls (`--orchApiQPS`, `--orchApiBurst`). */
  readonly limiter: RateLimiter;
  /** Logger of the registry. */
  readonly log: Logger;
  /** Where the `discovery_orch_*` metrics go; absent in tests that do not read them. */
  readonly metrics?: Metrics;
  /** First retry delay after a failed list or watch, doubled up to 30 s. */
  readonly retryMs?: number;
}

type Kind = "Services" | "Endpoints" | "Pods" | "Nodes";
type AnyObject = { metadata?: { name?: string; namespace?: string } };

/** Reads the orchestrator's Services, Endpoints, Pods and Nodes into a registry. */
export class OrchRegistry {
  /** The registry the aggregate reads; provider `Orchestrator`. */
  readonly registry: MemoryRegistry;
  readonly #options: OrchRegistryOptions;
  readonly #services = new Map<string, OrchService>();
  readonly #endpoints = new Map<string, OrchEndpoints>();
  readonly #pods = new Map<string, OrchPod>();
  readonly #nodes = new Map<string, OrchNode>();
  /** `ns/pod` → keys (`ns/service`) of Endpoints waiting for that pod. */
  readonly #waitingOnPod = new Map<string, Set<string>>();
  readonly #informers: RunningInformer[] = [];
  readonly #synced = new Set<Kind>();
  #stopped = false;

  constructor(options: OrchRegistryOptions) {
    this.#options = options;
    this.registry = new MemoryRegistry({
      provider: "Orchestrator",
      clusterId: options.clusterId,
      synced: false,
    });
  }

  /** As the `ServiceRegistry` the aggregate takes. */
  get serviceRegistry(): ServiceRegistry {
    return this.registry;
  }

  /** Starts every informer; returns at once (sync is reported through `hasSynced`). */
  start(): void {
    const core = this.#options.kubeConfig.makeApiClient(k8s.CoreV1Api);
    this.#watch(
      "Services",
      "/api/v1/services",
      () => core.listServiceForAllNamespaces(),
      this.#services,
      (key) => this.#serviceChanged(key),
    );
    this.#watch(
      "Endpoints",
      "/api/v1/endpoints",
      () => core.listEndpointsForAllNamespaces(),
      this.#endpoints,
      (key) => this.#recomputeEndpoints(key),
    );
    this.#watch(
      "Pods",
      "/api/v1/pods",
      () => core.listPodForAllNamespaces(),
      this.#pods,
      (key) => this.#podChanged(key),
    );
    this.#watch("Nodes", "/api/v1/nodes", () => core.listNode(), this.#nodes, () => this.#recomputeAll());
  }

  /** Stops every informer and pending retry. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#informers.map((i) => i.stop()));
  }

  #watch<T extends AnyObject>(
    kind: Kind,
    path: string,
    // The client's typed lists; their items carry at least the fields of `T` (see orch_objects.ts).
    list: () => Promise<unknown>,
    into: Map<string, T>,
    changed: (key: string) => void,
  ): void {
    const key = (o: AnyObject) => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;
    const seen = (event: string, o: AnyObject, present: boolean) => {
      if (present) into.set(key(o), o as T);
      else into.delete(key(o));
      this.#options.metrics?.counter("discovery_orch_reg_events").inc({ type: kind, event });
      if (this.#synced.has(kind)) changed(key(o));
    };
    this.#informers.push(startInformer(this.#options, {
      what: kind,
      path,
      list,
      onAdd: (o) => seen("add", o, true),
      onUpdate: (o) => seen("update", o, true),
      onDelete: (o) => seen("delete", o, false),
      onListed: () => this.#markSynced(kind, into.size),
    }));
  }

  #markSynced(kind: Kind, objects: number): void {
    if (this.#synced.has(kind) || this.#stopped) return;
    this.#synced.add(kind);
    this.#options.log.info("orchestrator informer synced", { kind, objects });
    if (this.#synced.size === 4) this.#initialSync();
  }

  /** After every informer's first list: all services and endpoints at once, then the registry is synced. */
  #initialSync(): void {
    for (const key of this.#services.keys()) this.#serviceChanged(key);
    this.registry.setSynced(true);
  }

  #serviceChanged(key: string): void {
    const [namespace, name] = key.split("/");
    const hostname = serviceHostname(name, namespace, this.#options.domain);
    const svc = this.#services.get(key);
    if (svc === undefined) {
      this.registry.removeService(hostname, namespace);
      return;
    }
    this.registry.addService(serviceFromOrch(svc, this.#options));
    this.#recomputeEndpoints(key);
  }

  #podChanged(key: string): void {
    const waiting = this.#waitingOnPod.get(key);
    const affected = new Set(waiting ?? []);
    const pod = this.#pods.get(key);
    // A pod's labels, account or readiness change what its endpoints say: recompute the Endpoints naming it.
    for (const [epKey, eps] of this.#endpoints) {
      const names = eps.subsets?.some((s) =>
        [...(s.addresses ?? []), ...(s.notReadyAddresses ?? [])].some((a) =>
          a.targetRef?.name !== undefined &&
          `${a.targetRef.namespace ?? eps.metadata.namespace}/${a.targetRef.name}` === key
        )
      );
      if (names) affected.add(epKey);
    }
    if (pod !== undefined) this.#waitingOnPod.delete(key);
    for (const epKey of affected) this.#recomputeEndpoints(epKey);
  }

  #recomputeAll(): void {
    for (const key of this.#endpoints.keys()) this.#recomputeEndpoints(key);
  }

  #recomputeEndpoints(key: string): void {
    const [namespace, name] = key.split("/");
    if (!this.#services.has(key)) return;
    const eps = this.#endpoints.get(key);
    const hostname = serviceHostname(name, namespace, this.#options.domain);
    if (eps === undefined) {
      this.registry.setEndpoints(hostname, namespace, []);
      return;
    }
    const converted = endpointsFromOrch(
      eps,
      (ns, pod) => this.#pods.get(`${ns}/${pod}`),
      (node) => this.#nodes.get(`/${node}`),
      this.#options,
    );
    for (const pod of converted.pendingPods) {
      const set = this.#waitingOnPod.get(pod) ?? new Set();
      set.add(key);
      this.#waitingOnPod.set(pod, set);
    }
    this.#options.metrics?.gauge("discovery_orch_endpoints_pending_pod").set(this.#waitingOnPod.size);
    this.registry.setEndpoints(hostname, namespace, converted.endpoints);
  }
}
