/**
 * The orchestrator as a service registry: informers (list, then watch from the listed resource version,
 * relisting on 410 Gone and reconnecting when a watch drops) over Services, Endpoints (or EndpointSlices with
 * `DISCOVERY_USE_ENDPOINT_SLICE`), Pods, Nodes and Namespaces, turned
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
import type { Endpoint } from "../model/endpoint.ts";
import type { ServiceRegistry } from "../registry/service_registry.ts";
import {
  type ConvertContext,
  endpointsFromOrch,
  podWorkloadSpec,
  serviceFromOrch,
  serviceHostname,
} from "./orch_convert.ts";
import type { SelectableWorkload, WorkloadSource } from "../registry/workload_source.ts";
import { convertEndpoint } from "../registry/serviceentry/convert_service_entry.ts";
import { selectorMatches } from "../model/labels.ts";
import type {
  OrchEndpoints,
  OrchEndpointSlice,
  OrchNamespace,
  OrchNode,
  OrchPod,
  OrchService,
} from "./orch_objects.ts";
import { endpointsFromSlices, sliceServiceKey } from "./endpoint_slices.ts";
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
  /**
   * `--resync`: how often every service and its endpoints are recomputed from the informers' caches, so any
   * drift is repaired; results equal to what the registry holds emit nothing. Absent: never.
   */
  readonly resyncMs?: number;
  /** `DISCOVERY_USE_ENDPOINT_SLICE`: read EndpointSlices instead of Endpoints. */
  readonly useEndpointSlices?: boolean;
  /** Told of every failed list or watch before its retry. */
  readonly onFailure?: (kind: string, error: unknown) => void;
}

type Kind = "Services" | "Endpoints" | "EndpointSlices" | "Pods" | "Nodes" | "Namespaces";

/** The kinds whose objects the registry lends out read-only (`watched`). */
export type WatchedKind = "Services" | "Pods" | "Namespaces";
/** Told of each event of a watched kind once it is synced, with the object before and after (undefined: none). */
export type WatchedListener = (kind: WatchedKind, before: unknown, after: unknown) => void;

/** Informers the registry runs: services, endpoints (or slices), pods, nodes and namespaces. */
const INFORMERS = 5;
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
  readonly #namespaces = new Map<string, OrchNamespace>();
  readonly #slices = new Map<string, OrchEndpointSlice>();
  /** Slice key → the `ns/service` it was last filed under, so a deleted or relabelled slice is found. */
  readonly #sliceService = new Map<string, string>();
  /** `ns/service` → keys of its slices. */
  readonly #serviceSlices = new Map<string, Set<string>>();
  /** `ns/pod` → keys (`ns/service`) of Endpoints waiting for that pod. */
  readonly #waitingOnPod = new Map<string, Set<string>>();
  /** `ns/pod` → keys of the Endpoints that name it, so a pod change touches only those. */
  readonly #podEndpoints = new Map<string, Set<string>>();
  /** Endpoints key → the pods it named at its last recompute. */
  readonly #endpointPods = new Map<string, Set<string>>();
  /** What was last handed to the registry per `ns/service`: an unchanged result emits nothing. */
  readonly #lastService = new Map<string, string>();
  readonly #lastEndpoints = new Map<string, string>();
  #resyncTimer?: ReturnType<typeof setInterval>;
  readonly #podListeners = new Set<(namespace: string) => void>();
  readonly #watchedListeners = new Set<WatchedListener>();
  #workloadEntries?: WorkloadSource;
  readonly #informers: RunningInformer[] = [];
  readonly #synced = new Set<Kind>();
  readonly #initiallySynced = Promise.withResolvers<void>();
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

  /**
   * The pods as workloads other registries select (ServiceEntries with a workload selector): running pods with
   * an IP that are ready, as WorkloadEntry-shaped specs (labels, service account, locality from the node).
   */
  readonly pods: WorkloadSource = {
    workloads: (namespace) => {
      const out: SelectableWorkload[] = [];
      for (const pod of this.#pods.values()) {
        if ((pod.metadata.namespace ?? "default") !== namespace) continue;
        const spec = podWorkloadSpec(pod, (node) => this.#nodes.get(`/${node}`));
        if (spec !== undefined) out.push({ name: pod.metadata.name, namespace, spec });
      }
      return out.sort((a, b) => a.name.localeCompare(b.name));
    },
    onChange: (listener) => {
      this.#podListeners.add(listener);
      return () => this.#podListeners.delete(listener);
    },
  };

  /**
   * WorkloadEntries that Services also select by their selector (`DISCOVERY_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES`);
   * set once, after the registries exist. Their changes recompute the endpoints of that namespace's Services.
   */
  selectWorkloadEntries(source: WorkloadSource): void {
    this.#workloadEntries = source;
    source.onChange((namespace) => {
      if (this.#synced.size < INFORMERS) return;
      for (const [key, svc] of this.#services) {
        if ((svc.metadata.namespace ?? "default") === namespace && svc.spec?.selector) {
          this.#recomputeEndpoints(key);
        }
      }
    });
  }

  /**
   * The Services, Pods or Namespaces as the orchestrator serves them, read-only: the objects the registry holds
   * anyway, lent to readers such as analysis rather than watched twice.
   */
  watched(kind: WatchedKind): Iterable<unknown> {
    const maps = { Services: this.#services, Pods: this.#pods, Namespaces: this.#namespaces };
    return maps[kind].values();
  }

  /** Resolves once every informer has delivered its first list and the registry is synced. */
  get initiallySynced(): Promise<void> {
    return this.#initiallySynced.promise;
  }

  /** Calls `listener` on each event of a watched kind after its first list; returns the unsubscribe. */
  onWatchedChange(listener: WatchedListener): () => void {
    this.#watchedListeners.add(listener);
    return () => this.#watchedListeners.delete(listener);
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
    if (this.#options.useEndpointSlices) {
      const discoveryApi = this.#options.kubeConfig.makeApiClient(k8s.DiscoveryV1Api);
      this.#watch(
        "EndpointSlices",
        "/apis/discovery.k8s.io/v1/endpointslices",
        () => discoveryApi.listEndpointSliceForAllNamespaces(),
        this.#slices,
        (key) => this.#sliceChanged(key),
      );
    } else {
      this.#watch(
        "Endpoints",
        "/api/v1/endpoints",
        () => core.listEndpointsForAllNamespaces(),
        this.#endpoints,
        (key) => this.#recomputeEndpoints(key),
      );
    }
    this.#watch(
      "Pods",
      "/api/v1/pods",
      () => core.listPodForAllNamespaces(),
      this.#pods,
      (key) => this.#podChanged(key),
    );
    this.#watch("Nodes", "/api/v1/nodes", () => core.listNode(), this.#nodes, () => this.#recomputeAll());
    // A namespace's network label is the network of its endpoints that have none of their own.
    this.#watch("Namespaces", "/api/v1/namespaces", () => core.listNamespace(), this.#namespaces, (key) => {
      const namespace = key.slice(key.indexOf("/") + 1);
      for (const epKey of this.#endpoints.keys()) {
        if (epKey.startsWith(`${namespace}/`)) this.#recomputeEndpoints(epKey);
      }
    });
  }

  /** Stops every informer and pending retry. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#resyncTimer !== undefined) clearInterval(this.#resyncTimer);
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
      const before = into.get(key(o));
      if (present) into.set(key(o), o as T);
      else into.delete(key(o));
      this.#options.metrics?.counter("discovery_orch_reg_events").inc({ type: kind, event });
      if (!this.#synced.has(kind)) return;
      changed(key(o));
      if (kind === "Services" || kind === "Pods" || kind === "Namespaces") {
        for (const listener of this.#watchedListeners) listener(kind, before, present ? o : undefined);
      }
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
    if (this.#synced.size === INFORMERS) this.#initialSync();
  }

  /** After every informer's first list: all services and endpoints at once, then the registry is synced. */
  #initialSync(): void {
    for (const key of this.#slices.keys()) this.#fileSlice(key);
    for (const key of this.#services.keys()) this.#serviceChanged(key);
    const namespaces = new Set([...this.#pods.values()].map((p) => p.metadata.namespace ?? "default"));
    for (const namespace of namespaces) for (const listener of [...this.#podListeners]) listener(namespace);
    this.registry.setSynced(true);
    this.#initiallySynced.resolve();
    const resyncMs = this.#options.resyncMs;
    if (resyncMs !== undefined && resyncMs > 0 && !this.#stopped) {
      this.#resyncTimer = setInterval(() => {
        for (const key of this.#services.keys()) this.#serviceChanged(key);
      }, resyncMs);
    }
  }

  #serviceChanged(key: string): void {
    const [namespace, name] = key.split("/");
    const hostname = serviceHostname(name, namespace, this.#options.domain);
    const svc = this.#services.get(key);
    if (svc === undefined) {
      this.#lastService.delete(key);
      this.#lastEndpoints.delete(key);
      this.registry.removeService(hostname, namespace);
      return;
    }
    const converted = serviceFromOrch(svc, this.#options);
    const text = JSON.stringify(converted);
    if (this.#lastService.get(key) !== text) {
      this.#lastService.set(key, text);
      this.registry.addService(converted);
    }
    this.#recomputeEndpoints(key);
  }

  /** Files a slice under its service (or out of the old one) and rebuilds the services' Endpoints view. */
  #fileSlice(sliceKey: string): string[] {
    const before = this.#sliceService.get(sliceKey);
    const slice = this.#slices.get(sliceKey);
    const after = slice === undefined ? undefined : sliceServiceKey(slice);
    if (before !== undefined && before !== after) {
      this.#serviceSlices.get(before)?.delete(sliceKey);
      this.#sliceService.delete(sliceKey);
    }
    if (after !== undefined) {
      const set = this.#serviceSlices.get(after) ?? new Set();
      set.add(sliceKey);
      this.#serviceSlices.set(after, set);
      this.#sliceService.set(sliceKey, after);
    }
    const touched = [...new Set([before, after].filter((k) => k !== undefined))];
    for (const serviceKey of touched) {
      const keys = [...this.#serviceSlices.get(serviceKey) ?? []];
      if (keys.length === 0) {
        this.#serviceSlices.delete(serviceKey);
        this.#endpoints.delete(serviceKey);
        continue;
      }
      const [namespace, name] = serviceKey.split("/");
      this.#endpoints.set(
        serviceKey,
        endpointsFromSlices(namespace, name, keys.map((k) => this.#slices.get(k)!)),
      );
    }
    return touched;
  }

  #sliceChanged(sliceKey: string): void {
    for (const serviceKey of this.#fileSlice(sliceKey)) this.#recomputeEndpoints(serviceKey);
  }

  #podChanged(key: string): void {
    const namespace = key.slice(0, key.indexOf("/"));
    for (const listener of [...this.#podListeners]) listener(namespace);
    // A pod's labels, account or readiness change what its endpoints say: recompute the Endpoints naming it.
    const affected = new Set([...this.#waitingOnPod.get(key) ?? [], ...this.#podEndpoints.get(key) ?? []]);
    if (this.#pods.has(key)) this.#waitingOnPod.delete(key);
    for (const epKey of affected) this.#recomputeEndpoints(epKey);
  }

  /** Files which pods `eps` names under `epKey` in the pod index. */
  #indexPods(epKey: string, eps: OrchEndpoints | undefined): void {
    const namespace = eps?.metadata.namespace ?? "default";
    const now = new Set<string>();
    for (const subset of eps?.subsets ?? []) {
      for (const address of [...(subset.addresses ?? []), ...(subset.notReadyAddresses ?? [])]) {
        if (address.targetRef?.name) {
          now.add(`${address.targetRef.namespace ?? namespace}/${address.targetRef.name}`);
        }
      }
    }
    for (const pod of this.#endpointPods.get(epKey) ?? []) {
      if (now.has(pod)) continue;
      const set = this.#podEndpoints.get(pod);
      set?.delete(epKey);
      if (set?.size === 0) this.#podEndpoints.delete(pod);
    }
    for (const pod of now) {
      const set = this.#podEndpoints.get(pod) ?? new Set();
      set.add(epKey);
      this.#podEndpoints.set(pod, set);
    }
    if (now.size > 0) this.#endpointPods.set(epKey, now);
    else this.#endpointPods.delete(epKey);
  }

  #recomputeAll(): void {
    for (const key of this.#endpoints.keys()) this.#recomputeEndpoints(key);
  }

  #recomputeEndpoints(key: string): void {
    const [namespace, name] = key.split("/");
    const eps = this.#endpoints.get(key);
    this.#indexPods(key, eps);
    if (!this.#services.has(key)) return;
    const hostname = serviceHostname(name, namespace, this.#options.domain);
    const selected = this.#workloadEntryEndpoints(key);
    if (eps === undefined) {
      this.#setEndpoints(key, hostname, namespace, selected);
      return;
    }
    const converted = endpointsFromOrch(
      eps,
      (ns, pod) => this.#pods.get(`${ns}/${pod}`),
      (node) => this.#nodes.get(`/${node}`),
      this.#options,
      (name) => this.#namespaces.get(`/${name}`),
    );
    for (const pod of converted.pendingPods) {
      const set = this.#waitingOnPod.get(pod) ?? new Set();
      set.add(key);
      this.#waitingOnPod.set(pod, set);
    }
    const metrics = this.#options.metrics;
    // The reference counts each address met before its pod, and gauges those still waiting (`endpoint_no_pod`).
    if (converted.pendingPods.length > 0) {
      metrics?.counter("discovery_orch_endpoints_with_no_pods").inc(converted.pendingPods.length);
    }
    metrics?.gauge("discovery_orch_endpoints_pending_pod").set(this.#waitingOnPod.size);
    metrics?.gauge("endpoint_no_pod").set(this.#waitingOnPod.size);
    this.#setEndpoints(key, hostname, namespace, [...converted.endpoints, ...selected]);
  }

  /** Endpoints of the WorkloadEntries the Service at `key` selects, one per service port. */
  #workloadEntryEndpoints(key: string): Endpoint[] {
    const svc = this.#services.get(key);
    const selector = svc?.spec?.selector;
    if (
      this.#workloadEntries === undefined || svc === undefined || !selector ||
      Object.keys(selector).length === 0
    ) {
      return [];
    }
    const namespace = svc.metadata.namespace ?? "default";
    const out: Endpoint[] = [];
    for (const workload of this.#workloadEntries.workloads(namespace)) {
      if (!selectorMatches(selector, workload.spec.labels ?? {})) continue;
      for (const port of svc.spec?.ports ?? []) {
        const target = typeof port.targetPort === "number" ? port.targetPort : undefined;
        out.push(convertEndpoint(workload.spec, {
          number: port.port,
          ...(port.name ? { name: port.name } : {}),
          ...(target ? { targetPort: target } : {}),
        }, { namespace, workloadName: workload.name, clusterId: this.#options.clusterId }));
      }
    }
    return out;
  }

  #setEndpoints(key: string, hostname: string, namespace: string, endpoints: Endpoint[]): void {
    const text = JSON.stringify(endpoints);
    if (this.#lastEndpoints.get(key) === text) return;
    this.#lastEndpoints.set(key, text);
    this.registry.setEndpoints(hostname, namespace, endpoints);
  }
}
