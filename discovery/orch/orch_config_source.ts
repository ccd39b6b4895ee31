/**
 * The orchestrator as a config source: the mesh kinds as custom resources, under our groups
 * (`networking.mesh.io`, `security.mesh.io`) and Istio's (accepted unchanged), watched with informers and
 * validated with the same validators as the file source. An invalid object is rejected alone (its last good
 * version, if any, stays), counted, logged once and shown in `/debug/configz`; it never stops the others.
 *
 * A kind the orchestrator does not serve (its definition not installed: only Istio's groups, or only ours) is
 * looked for again every minute and watched once it appears; readiness waits only for the kinds it serves.
 *
 * The same name may exist under both groups: the store holds one resource per kind, namespace and name, so the
 * object under our group wins, and a delete takes the resource out of the store only when no group has it.
 *
 * @module
 */
import * as k8s from "@kubernetes/client-node";
import { KINDS } from "@mesh/shared/config/kinds";
import { parseResource } from "@mesh/shared/config/validate_resource";
import type { Resource } from "@mesh/shared/config/resource";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { RejectedConfig } from "../model/config_store.ts";
import type { SyncableConfigStore } from "../config/memory_config_store.ts";
import type { Timers } from "@mesh/shared/time/timers";
import type { RateLimiter } from "./orch_client.ts";
import { type RunningInformer, startInformer } from "./resilient_informer.ts";

/** What the orchestrator config source needs. */
export interface OrchConfigSourceOptions {
  /** The client configuration. */
  readonly kubeConfig: k8s.KubeConfig;
  /** Where valid resources go. */
  readonly store: SyncableConfigStore;
  /** Bounds list calls. */
  readonly limiter: RateLimiter;
  /** Logger of the source. */
  readonly log: Logger;
  /** Where `discovery_orch_cfg_events` and the object error metrics go. */
  readonly metrics?: Metrics;
  /** First retry delay after a failed list or watch, doubled up to 30 s. */
  readonly retryMs?: number;
  /** Marks the store synced after the first full list: true when no other source does. */
  readonly marksStoreSynced?: boolean;
  /** How often a kind the orchestrator does not serve is looked for again (default 60 s). */
  readonly absentRecheckMs?: number;
  /** Timers of the retries and rechecks; the runtime's when absent. */
  readonly timers?: Timers;
}

interface Watched {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
}

function idOf(w: Watched): string {
  return `${w.group}/${w.plural}`;
}

type CustomObject = { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } };

/** Watches the mesh's custom resources into a config store. */
export class OrchConfigSource {
  readonly #options: OrchConfigSourceOptions;
  readonly #watched: readonly Watched[];
  /** `kind/namespace/name` → group → the valid resource that group holds. */
  readonly #valid = new Map<string, Map<string, Resource>>();
  /** `group/kind/namespace/name` → why it was refused. */
  readonly #rejected = new Map<string, RejectedConfig>();
  readonly #informers: RunningInformer[] = [];
  readonly #synced = new Set<string>();
  /** Kinds the orchestrator answered 404 for, and has not served since. */
  readonly #absent = new Set<string>();
  #reportedSynced = false;

  constructor(options: OrchConfigSourceOptions) {
    this.#options = options;
    this.#watched = KINDS.flatMap((info) =>
      [info.group, info.group.replace(".mesh.io", ".istio.io")].map((group) => ({
        group,
        version: info.versions.at(-1)!,
        plural: info.plural,
        kind: info.kind,
      }))
    );
  }

  /** True once every kind the orchestrator serves has been listed once. */
  get synced(): boolean {
    return this.#watched.every((w) => this.#synced.has(idOf(w)) || this.#absent.has(idOf(w)));
  }

  /** Kinds (`group/plural`) the orchestrator does not serve, for logs and tests. */
  absentKinds(): string[] {
    return [...this.#absent].sort();
  }

  /** Objects currently refused, for `/debug/configz`. */
  rejected(): RejectedConfig[] {
    return [...this.#rejected.values()];
  }

  /** Whether every served kind was listed, and the kinds the orchestrator does not serve, for `/debug/configz`. */
  status(): { readonly synced: boolean; readonly absentKinds: readonly string[] } {
    return { synced: this.synced, absentKinds: this.absentKinds() };
  }

  /** Starts an informer per kind and group; returns at once. */
  start(): void {
    const api = this.#options.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    for (const w of this.#watched) this.#watch(w, api);
  }

  /** Stops every informer and pending retry. */
  async stop(): Promise<void> {
    await Promise.all(this.#informers.map((i) => i.stop()));
  }

  #watch(w: Watched, api: k8s.CustomObjectsApi): void {
    const id = idOf(w);
    this.#informers.push(startInformer(this.#options, {
      what: `${w.group} ${w.kind}`,
      path: `/apis/${w.group}/${w.version}/${w.plural}`,
      list: () => api.listClusterCustomObject({ group: w.group, version: w.version, plural: w.plural }),
      onAdd: (o) => this.#upsert(w, o as CustomObject, "add"),
      onUpdate: (o) => this.#upsert(w, o as CustomObject, "update"),
      onDelete: (o) => this.#remove(w, o as CustomObject),
      onListed: () => {
        this.#synced.add(id);
        this.#absent.delete(id);
        this.#reportSynced();
      },
      onAbsent: () => {
        this.#absent.add(id);
        this.#reportSynced();
      },
    }));
  }

  #reportSynced(): void {
    if (this.#reportedSynced || !this.synced) return;
    this.#reportedSynced = true;
    this.#options.log.info("orchestrator config synced", {
      kinds: this.#synced.size,
      ...(this.#absent.size > 0 && { notServed: this.absentKinds() }),
    });
    if (this.#options.marksStoreSynced) this.#options.store.markSynced();
  }

  #count(w: Watched, event: string): void {
    this.#options.metrics?.counter("discovery_orch_cfg_events").inc({ type: w.kind, event });
  }

  #upsert(w: Watched, object: CustomObject, event: "add" | "update"): void {
    this.#count(w, event);
    const name = object.metadata?.name ?? "";
    const namespace = object.metadata?.namespace ?? "default";
    const origin = `orchestrator:${w.group}/${w.plural}/${namespace}/${name}`;
    const rejectionKey = `${w.group}/${w.kind}/${namespace}/${name}`;
    // Informers hand back the typed client's objects; the validator reads plain JSON, as the API sent it.
    const { resource, report } = parseResource(
      JSON.parse(JSON.stringify(object)),
      { file: origin, line: 1 },
      {
        defaultNamespace: "default",
      },
    );
    if (resource === undefined) {
      const errors = report.errors.map((i) =>
        `${origin}: ${i.path === "" ? i.message : `${i.path}: ${i.message}`}`
      );
      const known = this.#rejected.get(rejectionKey);
      this.#rejected.set(rejectionKey, { file: origin, line: 1, kind: w.kind, namespace, name, errors });
      if (known === undefined || known.errors.join() !== errors.join()) {
        this.#options.log.warn("orchestrator config rejected", { origin, errors });
        this.#options.metrics?.counter("discovery_total_orch_object_errors").inc();
      }
      this.#options.metrics?.gauge("discovery_orch_object_errors").set(this.#rejected.size);
      return;
    }
    if (this.#rejected.delete(rejectionKey)) {
      this.#options.metrics?.gauge("discovery_orch_object_errors").set(this.#rejected.size);
    }
    const key = `${w.kind}/${namespace}/${name}`;
    const byGroup = this.#valid.get(key) ?? new Map<string, Resource>();
    byGroup.set(w.group, resource);
    this.#valid.set(key, byGroup);
    this.#publish(key);
  }

  #remove(w: Watched, object: CustomObject): void {
    this.#count(w, "delete");
    const name = object.metadata?.name ?? "";
    const namespace = object.metadata?.namespace ?? "default";
    if (this.#rejected.delete(`${w.group}/${w.kind}/${namespace}/${name}`)) {
      this.#options.metrics?.gauge("discovery_orch_object_errors").set(this.#rejected.size);
    }
    const key = `${w.kind}/${namespace}/${name}`;
    const byGroup = this.#valid.get(key);
    if (byGroup === undefined) return;
    byGroup.delete(w.group);
    if (byGroup.size === 0) {
      this.#valid.delete(key);
      this.#options.store.delete(w.kind, namespace, name);
      return;
    }
    this.#publish(key);
  }

  /** Writes the winning version of a key: our group's when both groups hold it. */
  #publish(key: string): void {
    const byGroup = this.#valid.get(key)!;
    const ours = [...byGroup.keys()].find((g) => g.endsWith(".mesh.io"));
    this.#options.store.apply(byGroup.get(ours ?? [...byGroup.keys()][0])!);
  }
}
