/**
 * The orchestrator as a service registry: informers (list, then watch from the listed resource version,
 * relisting on 410 Gone and reconnecting when a watch drops) over Services, Endpoints (or EndpointSlices with
 * `DISCOVERY_USE_ENDPOINT_SLICE`), Pods, Nodes and Namespaces, turned
 * into model services and endpoints in a `MemoryRegistry` that the aggregate registry reads.
 *
 * Changes are incremental: each service's endpoints file the pods, nodes and namespaces their conversion read,
 * so an Endpoints, Pod, Node or Namespace change recomputes only the services that read it (an endpoint event:
 * EDS only), and only when it changed a field the conversion reads (`orch_changes.ts`): a Node's annotations or
 * a pod's status report cost a comparison. A Service change replaces that one service. Results equal to what
 * the registry holds emit nothing. The registry reports synced once every informer has delivered its first
 * full list.
 *
 * @module
 */
import type * as k8s from "@kubernetes/client-node";
import { isDeepStrictEqual } from "node:util";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { MemoryRegistry } from "../registry/memory_registry.ts";
import type { Endpoint } from "../model/endpoint.ts";
import type { Service } from "../model/service.ts";
import type { ServiceRegistry } from "../registry/service_registry.ts";
import { type ConvertContext, serviceFromOrch, serviceHostname } from "./orch_convert.ts";
import type { WorkloadSource } from "../registry/workload_source.ts";
import type {
  OrchEndpoints,
  OrchEndpointSlice,
  OrchNamespace,
  OrchNode,
  OrchPod,
  OrchService,
} from "./orch_objects.ts";
import { endpointsFromSlices, SliceFiling } from "./endpoint_slices.ts";
import type { RateLimiter } from "./rate_limiter.ts";
import { type RunningInformer, startInformer } from "./resilient_informer.ts";
import { LoopSlices } from "@mesh/shared/time/loop_slices";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import { selectedWorkloadEntryEndpoints } from "./selected_workload_entries.ts";
import { namespaceChangesModel, nodeChangesModel, podChangesEndpoints } from "./orch_changes.ts";
import { OrchPodWorkloads } from "./orch_pod_workloads.ts";
import { EndpointReads } from "./orch_endpoint_reads.ts";
import { rawList } from "./orch_raw_list.ts";
import type { Shaped } from "./orch_shape_reader.ts";
import { ShapeReports } from "./orch_shape_reports.ts";
import {
  shapeEndpoints,
  shapeEndpointSlice,
  shapeMetaOnly,
  shapePod,
  shapeService,
} from "./orch_object_shapes.ts";

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
  /** How long a resync works before the event loop gets a turn (default `DEFAULT_SLICE_MS`). */
  readonly resyncSliceMs?: number;
  /** Timers of the resyncs and of the informers' retries; the runtime's when absent. */
  readonly timers?: Timers;
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
  readonly #sliceFiling = new SliceFiling();
  /** What was last handed to the registry per `ns/service`: an unchanged result emits nothing. */
  readonly #lastService = new Map<string, Service>();
  readonly #lastEndpoints = new Map<string, readonly Endpoint[]>();
  #resyncTimer?: unknown;
  #resyncing = false;
  readonly #watchedListeners = new Set<WatchedListener>();
  #workloadEntries?: WorkloadSource;
  readonly #informers: RunningInformer[] = [];
  readonly #synced = new Set<Kind>();
  readonly #initiallySynced = Promise.withResolvers<void>();
  #stopped = false;
  /** The node named `name` (nodes have no namespace: their key is `/name`). */
  readonly #node = (name: string): OrchNode | undefined => this.#nodes.get(`/${name}`);
  readonly #workloads = new OrchPodWorkloads(this.#pods, this.#node);
  readonly #reads: EndpointReads;
  readonly #reports: ShapeReports;

  constructor(options: OrchRegistryOptions) {
    this.#options = options;
    this.#reports = new ShapeReports(
      options.log,
      options.metrics,
      () => (options.timers ?? systemTimers).now(),
    );
    this.#reads = new EndpointReads(
      {
        pod: (key) => this.#pods.get(key),
        node: this.#node,
        namespace: (name) => this.#namespaces.get(`/${name}`),
      },
      options,
      options.metrics,
    );
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
  get pods(): WorkloadSource {
    return this.#workloads;
  }

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
    this.#watch(
      "Services",
      "/api/v1/services",
      shapeService,
      this.#services,
      (key) => this.#serviceChanged(key),
    );
    if (this.#options.useEndpointSlices) {
      this.#watch(
        "EndpointSlices",
        "/apis/discovery.k8s.io/v1/endpointslices",
        shapeEndpointSlice,
        this.#slices,
        (key) => this.#sliceChanged(key),
      );
    } else {
      this.#watch("Endpoints", "/api/v1/endpoints", shapeEndpoints, this.#endpoints, (key) => {
        this.#recomputeEndpoints(key);
      });
    }
    this.#watch(
      "Pods",
      "/api/v1/pods",
      shapePod,
      this.#pods,
      (key, before) => this.#podChanged(key, before),
      (key, before, after) => this.#workloads.file(key, before, after),
    );
    this.#watch("Nodes", "/api/v1/nodes", shapeMetaOnly, this.#nodes, (key, before) => {
      this.#nodeChanged(key.slice(1), before);
    });
    this.#watch("Namespaces", "/api/v1/namespaces", shapeMetaOnly, this.#namespaces, (key, before) => {
      this.#namespaceChanged(key.slice(1), before);
    });
  }

  /** Stops every informer and pending retry. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#resyncTimer !== undefined) {
      (this.#options.timers ?? systemTimers).clearTimeout(this.#resyncTimer);
    }
    await Promise.all(this.#informers.map((i) => i.stop()));
  }

  #watch<T extends AnyObject>(
    kind: Kind,
    path: string,
    // What is stored is only ever the object as far as it has the shape of `T`; one that has none is not.
    shape: (raw: unknown) => Shaped<T>,
    into: Map<string, T>,
    // Once the kind is synced; `before` is the object as it was (undefined when added).
    changed: (key: string, before: T | undefined) => void,
    // On every event, synced or not: indexes of the objects themselves.
    file?: (key: string, before: T | undefined, after: T | undefined) => void,
  ): void {
    const keyOf = (o: AnyObject) => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;
    const seen = (event: string, raw: AnyObject, present: boolean) => {
      this.#options.metrics?.counter("discovery_orch_reg_events").inc({ type: kind, event });
      const shaped = present ? shape(raw) : undefined;
      if (shaped !== undefined) this.#reports.report(kind, raw, shaped);
      // Refused whole: it has no key to be stored under, so what an earlier version filed stays.
      if (shaped !== undefined && shaped.object === undefined) return;
      const o = shaped?.object ?? raw;
      const key = keyOf(o);
      const before = into.get(key);
      if (!present && before === undefined) return;
      if (present) into.set(key, o as T);
      else into.delete(key);
      file?.(key, before, present ? o as T : undefined);
      if (!this.#synced.has(kind)) return;
      changed(key, before);
      if (kind === "Services" || kind === "Pods" || kind === "Namespaces") {
        for (const listener of this.#watchedListeners) listener(kind, before, present ? o : undefined);
      }
    };
    this.#informers.push(startInformer(this.#options, {
      what: kind,
      path,
      list: rawList(this.#options.kubeConfig, path),
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
    for (const key of this.#services.keys()) this.#serviceChangedGuarded(key);
    this.#workloads.announceAll();
    this.registry.setSynced(true);
    this.#initiallySynced.resolve();
    const resyncMs = this.#options.resyncMs;
    if (resyncMs !== undefined && resyncMs > 0 && !this.#stopped) {
      const timers = this.#options.timers ?? systemTimers;
      // Every period, however long the last resync took; one still running makes the next a no-op.
      const tick = () => {
        this.#resyncTimer = timers.setTimeout(tick, resyncMs);
        void this.resync();
      };
      this.#resyncTimer = timers.setTimeout(tick, resyncMs);
    }
  }

  /**
   * Recomputes every service now, as `resyncMs` does periodically; resolves when done (at once while another
   * resync runs). A slice of the event loop at a time: all of them at once would hold the loop for as long as
   * the initial sync. A service deleted meanwhile is removed, as its watch event removed it.
   */
  async resync(): Promise<void> {
    if (this.#resyncing) return;
    this.#resyncing = true;
    try {
      const slices = new LoopSlices(this.#options.resyncSliceMs);
      for (const key of [...this.#services.keys()]) {
        await slices.pause();
        if (this.#stopped) return;
        this.#serviceChangedGuarded(key);
      }
    } finally {
      this.#resyncing = false;
    }
  }

  /**
   * A service's conversion where nothing may stop the loop around it (the first sync, a resync): one that throws
   * is left out of the registry alone, logged, and the rest go on, so one object never holds readiness.
   */
  #serviceChangedGuarded(key: string): void {
    try {
      this.#serviceChanged(key);
    } catch (error) {
      const [namespace, name] = key.split("/");
      this.#options.log.error("orchestrator service left out: converting it failed", {
        kind: "Services",
        object: key,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
      this.#lastService.delete(key);
      this.#lastEndpoints.delete(key);
      this.registry.removeService(serviceHostname(name, namespace, this.#options.domain), namespace);
    }
  }

  #serviceChanged(key: string): void {
    const [namespace, name] = key.split("/");
    const hostname = serviceHostname(name, namespace, this.#options.domain);
    const svc = this.#services.get(key);
    if (svc === undefined) {
      this.#lastService.delete(key);
      this.#lastEndpoints.delete(key);
      this.#reads.forget(key);
      this.registry.removeService(hostname, namespace);
      return;
    }
    const converted = serviceFromOrch(svc, this.#options);
    if (!isDeepStrictEqual(this.#lastService.get(key), converted)) {
      this.#lastService.set(key, converted);
      this.registry.addService(converted);
    }
    this.#recomputeEndpoints(key);
  }

  /** Files a slice under its service (or out of the old one) and rebuilds the services' Endpoints view. */
  #fileSlice(sliceKey: string): string[] {
    const touched = this.#sliceFiling.file(sliceKey, this.#slices.get(sliceKey));
    for (const serviceKey of touched) {
      const keys = this.#sliceFiling.slicesOf(serviceKey);
      if (keys.length === 0) {
        this.#endpoints.delete(serviceKey);
        continue;
      }
      const [namespace, name] = serviceKey.split("/");
      const slices = keys.map((k) => this.#slices.get(k)!);
      this.#endpoints.set(serviceKey, endpointsFromSlices(namespace, name, slices));
    }
    return touched;
  }

  #sliceChanged(sliceKey: string): void {
    for (const serviceKey of this.#fileSlice(sliceKey)) this.#recomputeEndpoints(serviceKey);
  }

  #podChanged(key: string, before: OrchPod | undefined): void {
    const after = this.#pods.get(key);
    this.#workloads.podChanged(key, before, after);
    if (after !== undefined) this.#reads.podArrived(key);
    if (!podChangesEndpoints(before, after)) return;
    for (const serviceKey of this.#reads.readersOfPod(key)) this.#recomputeEndpoints(serviceKey);
  }

  /** A Node's locality moves the endpoints read from it and the workloads on it; nothing else of it counts. */
  #nodeChanged(name: string, before: OrchNode | undefined): void {
    if (!nodeChangesModel(before, this.#node(name))) return;
    for (const serviceKey of this.#reads.readersOfNode(name)) this.#recomputeEndpoints(serviceKey);
    this.#workloads.nodeChanged(name);
  }

  /** A namespace's network label is the network of its endpoints that have none of their own. */
  #namespaceChanged(name: string, before: OrchNamespace | undefined): void {
    if (!namespaceChangesModel(before, this.#namespaces.get(`/${name}`))) return;
    for (const serviceKey of this.#reads.readersOfNamespace(name)) this.#recomputeEndpoints(serviceKey);
  }

  #recomputeEndpoints(key: string): void {
    const [namespace, name] = key.split("/");
    const eps = this.#endpoints.get(key);
    if (eps === undefined || !this.#services.has(key)) this.#reads.forget(key);
    if (!this.#services.has(key)) return;
    const hostname = serviceHostname(name, namespace, this.#options.domain);
    const svc = this.#services.get(key)!;
    const entries = this.#workloadEntries;
    const selected = entries ? selectedWorkloadEntryEndpoints(svc, entries, this.#options.clusterId) : [];
    if (eps === undefined) {
      this.#setEndpoints(key, hostname, namespace, selected);
      return;
    }
    const converted = this.#reads.convert(key, eps);
    this.#setEndpoints(key, hostname, namespace, [...converted.endpoints, ...selected]);
  }

  #setEndpoints(key: string, hostname: string, namespace: string, endpoints: Endpoint[]): void {
    if (isDeepStrictEqual(this.#lastEndpoints.get(key), endpoints)) return;
    this.#lastEndpoints.set(key, endpoints);
    this.registry.setEndpoints(hostname, namespace, endpoints);
  }
}
