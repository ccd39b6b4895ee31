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
 * An object of 64 KiB or more is judged in a worker (validating a VirtualService of thousands of regex routes
 * takes a second). While it is judged, the object's later events wait, the latest replacing any earlier one, so
 * they apply in order and a version already replaced is never applied; other objects go on meanwhile. A kind
 * counts as synced once the objects of its first list are judged.
 *
 * @module
 */
import * as k8s from "@kubernetes/client-node";
import { KINDS } from "@mesh/shared/config/kinds";
import type { Resource } from "@mesh/shared/config/resource";
import { type JobWorker, OffThreadJobs } from "@mesh/shared/process/off_thread_jobs";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { RejectedConfig } from "../model/config_store.ts";
import type { SyncableConfigStore } from "../config/memory_config_store.ts";
import type { Timers } from "@mesh/shared/time/timers";
import type { RateLimiter } from "./rate_limiter.ts";
import { type RunningInformer, startInformer } from "./resilient_informer.ts";
import {
  judgeOrchObject,
  OFF_THREAD_OBJECT_CHARS,
  type OrchObjectJob,
  type OrchObjectVerdict,
} from "./orch_object_verdict.ts";

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
  /** Starts the worker that judges large objects (default: a module `Worker`); tests pass a fake. */
  readonly spawnWorker?: (module: URL) => JobWorker;
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

/** One object of one watched kind and group. */
interface ObjectRef {
  readonly w: Watched;
  readonly namespace: string;
  readonly name: string;
}

function refOf(w: Watched, object: CustomObject): ObjectRef {
  return { w, namespace: object.metadata?.namespace ?? "default", name: object.metadata?.name ?? "" };
}

/** `group/kind/namespace/name`: the object under one group. */
function objectKey(ref: ObjectRef): string {
  return `${ref.w.group}/${ref.w.kind}/${ref.namespace}/${ref.name}`;
}

/** Where an object comes from, the prefix of its errors: `orchestrator:group/plural/namespace/name`. */
function originOf(ref: ObjectRef): string {
  return `orchestrator:${ref.w.group}/${ref.w.plural}/${ref.namespace}/${ref.name}`;
}

/** `kind/namespace/name`: the store's key, shared by the object's versions under both groups. */
function storeKey(ref: ObjectRef): string {
  return `${ref.w.kind}/${ref.namespace}/${ref.name}`;
}

/** What an event asks of an object: a new version, as the API sent it, or its removal. */
type Change = { readonly type: "upsert"; readonly text: string } | { readonly type: "delete" };

/** An object being judged in the worker, and the change that came for it meanwhile, the latest only. */
interface Judging {
  next?: Change;
}

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
  readonly #jobs: OffThreadJobs<OrchObjectJob, OrchObjectVerdict>;
  /** `group/kind/namespace/name` → the object's judging in the worker. */
  readonly #judging = new Map<string, Judging>();
  /** Kind id → objects of its first list still being judged; the kind is synced once none is left. */
  readonly #listPending = new Map<string, Set<string>>();
  #stopped = false;

  constructor(options: OrchConfigSourceOptions) {
    this.#options = options;
    this.#jobs = new OffThreadJobs({
      worker: new URL("./orch_object_worker.ts", import.meta.url),
      timers: options.timers,
      spawn: options.spawnWorker,
    });
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

  /** Stops every informer and pending retry, and the worker; judgements still under way are dropped. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#jobs.close();
    await Promise.all(this.#informers.map((i) => i.stop()));
  }

  #watch(w: Watched, api: k8s.CustomObjectsApi): void {
    const id = idOf(w);
    this.#informers.push(startInformer(this.#options, {
      what: `${w.group} ${w.kind}`,
      path: `/apis/${w.group}/${w.version}/${w.plural}`,
      list: () => api.listClusterCustomObject({ group: w.group, version: w.version, plural: w.plural }),
      onAdd: (o) => this.#event(w, o as CustomObject, "add"),
      onUpdate: (o) => this.#event(w, o as CustomObject, "update"),
      onDelete: (o) => this.#event(w, o as CustomObject, "delete"),
      onListed: () => {
        this.#absent.delete(id);
        const prefix = `${w.group}/${w.kind}/`;
        const pending = new Set([...this.#judging.keys()].filter((key) => key.startsWith(prefix)));
        if (pending.size > 0) this.#listPending.set(id, pending);
        else this.#listed(id);
      },
      onAbsent: () => {
        this.#absent.add(id);
        this.#reportSynced();
      },
    }));
  }

  #listed(id: string): void {
    this.#synced.add(id);
    this.#reportSynced();
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

  #event(w: Watched, object: CustomObject, event: "add" | "update" | "delete"): void {
    this.#count(w, event);
    const ref = refOf(w, object);
    // Informers hand back the typed client's objects; the validator reads plain JSON, as the API sent it.
    const change: Change = event === "delete"
      ? { type: "delete" }
      : { type: "upsert", text: JSON.stringify(object) };
    const judging = this.#judging.get(objectKey(ref));
    if (judging !== undefined) judging.next = change;
    else this.#change(ref, change);
  }

  #change(ref: ObjectRef, change: Change): void {
    if (change.type === "delete") {
      this.#remove(ref);
      return;
    }
    const job: OrchObjectJob = { text: change.text, origin: originOf(ref) };
    if (job.text.length < OFF_THREAD_OBJECT_CHARS) {
      this.#accept(ref, judgeOrchObject(job));
      return;
    }
    const key = objectKey(ref);
    const judging: Judging = {};
    this.#judging.set(key, judging);
    // No deadline: the object's judgement is owed however long the queue; its later versions replace it.
    this.#jobs.run(key, job, Number.POSITIVE_INFINITY).catch((error: Error): OrchObjectVerdict => ({
      ok: false,
      errors: [`${job.origin}: not validated: ${error.message}`],
    })).then((verdict) => {
      if (this.#stopped) return;
      this.#judging.delete(key);
      // A change that came meanwhile replaces the version judged: applying it would go back in time.
      try {
        if (judging.next === undefined) this.#accept(ref, verdict);
        else this.#change(ref, judging.next);
      } catch (error) {
        // Out of the informer's guard: a failure here would otherwise end the process.
        this.#options.log.error("orchestrator object left out: handling it failed", {
          origin: job.origin,
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        });
      }
      if (!this.#judging.has(key)) this.#judged(ref, key);
    });
  }

  /** Counts an object's first-list judgement done; its kind is synced once every such judgement is. */
  #judged(ref: ObjectRef, key: string): void {
    const id = idOf(ref.w);
    const pending = this.#listPending.get(id);
    if (pending === undefined || !pending.delete(key) || pending.size > 0) return;
    this.#listPending.delete(id);
    this.#listed(id);
  }

  #accept(ref: ObjectRef, verdict: OrchObjectVerdict): void {
    const { w, namespace, name } = ref;
    const rejectionKey = objectKey(ref);
    if (!verdict.ok) {
      const origin = originOf(ref);
      const known = this.#rejected.get(rejectionKey);
      this.#rejected.set(rejectionKey, {
        file: origin,
        line: 1,
        kind: w.kind,
        namespace,
        name,
        errors: verdict.errors,
      });
      if (known === undefined || known.errors.join() !== verdict.errors.join()) {
        this.#options.log.warn("orchestrator config rejected", { origin, errors: verdict.errors });
        this.#options.metrics?.counter("discovery_total_orch_object_errors").inc();
      }
      this.#options.metrics?.gauge("discovery_orch_object_errors").set(this.#rejected.size);
      return;
    }
    if (this.#rejected.delete(rejectionKey)) {
      this.#options.metrics?.gauge("discovery_orch_object_errors").set(this.#rejected.size);
    }
    const key = storeKey(ref);
    const byGroup = this.#valid.get(key) ?? new Map<string, Resource>();
    byGroup.set(w.group, verdict.resource);
    this.#valid.set(key, byGroup);
    this.#publish(key);
  }

  #remove(ref: ObjectRef): void {
    if (this.#rejected.delete(objectKey(ref))) {
      this.#options.metrics?.gauge("discovery_orch_object_errors").set(this.#rejected.size);
    }
    const key = storeKey(ref);
    const byGroup = this.#valid.get(key);
    if (byGroup === undefined) return;
    byGroup.delete(ref.w.group);
    if (byGroup.size === 0) {
      this.#valid.delete(key);
      this.#options.store.delete(ref.w.kind, ref.namespace, ref.name);
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
