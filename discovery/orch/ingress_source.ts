/**
 * The orchestrator's Ingresses as a config source: Ingresses and IngressClasses are watched, translated
 * (`ingress_convert.ts`) into Gateways and VirtualServices, validated like every other resource and written to
 * the config store; what an earlier translation wrote and the current one no longer holds is deleted. A
 * translated resource the validator refuses is refused alone and shown in `/debug/configz`, as is every part of
 * an Ingress that could not be translated.
 *
 * Both kinds are listed as plain JSON (`orch_raw_list.ts`) and each object is checked against the fields the
 * translation reads before it is stored (`ingress_shapes.ts`): anyone who may create an Ingress in a namespace
 * writes them, and the typed list failed every Ingress on one of the wrong shape. What is left out is logged
 * once a minute per object (`orch_shape_reports.ts`).
 *
 * Every event retranslates every Ingress: a cluster holds tens of them, and a host's VirtualService merges the
 * rules of all Ingresses that name it, so one Ingress's change can move another's routes.
 *
 * @module
 */
import type * as k8s from "@kubernetes/client-node";
import { parseResource } from "@mesh/shared/config/validate_resource";
import type { Resource } from "@mesh/shared/config/resource";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { Timers } from "@mesh/shared/time/timers";
import type { RejectedConfig } from "../model/config_store.ts";
import type { SyncableConfigStore } from "../config/memory_config_store.ts";
import type { RateLimiter } from "./rate_limiter.ts";
import {
  type IngressContext,
  type IngressObject,
  isMeshIngress,
  translateIngresses,
} from "./ingress_convert.ts";
import { type OrchObject, type RunningInformer, startInformer } from "./resilient_informer.ts";
import { rawList } from "./orch_raw_list.ts";
import type { Shaped } from "./orch_shape_reader.ts";
import { ShapeReports } from "./orch_shape_reports.ts";
import { shapeIngress, shapeIngressClass } from "./ingress_shapes.ts";
import { systemTimers } from "@mesh/shared/time/timers";

/** What the Ingress source needs. */
export interface IngressSourceOptions {
  readonly kubeConfig: k8s.KubeConfig;
  readonly limiter: RateLimiter;
  readonly store: SyncableConfigStore;
  readonly log: Logger;
  readonly metrics?: Metrics;
  /** The translation's settings, read at every translation (the mesh config may change). */
  readonly context: () => Omit<IngressContext, "classes">;
  readonly retryMs?: number;
  readonly absentRecheckMs?: number;
  readonly timers?: Timers;
}

const ORIGIN = "orchestrator:networking.k8s.io/ingresses";

/** Watches Ingresses and IngressClasses and keeps their translation in the config store. */
export class IngressConfigSource {
  readonly #options: IngressSourceOptions;
  readonly #ingresses = new Map<string, IngressObject>();
  readonly #classes = new Map<string, string>();
  /** `kind/namespace/name` of what the last translation wrote. */
  #written = new Map<string, Resource>();
  #rejected: RejectedConfig[] = [];
  readonly #informers: RunningInformer[] = [];
  readonly #listed = new Set<string>();
  readonly #absent = new Set<string>();
  #lastSkipped = "";
  #namedPorts = false;
  readonly #translated = new Set<() => void>();
  readonly #reports: ShapeReports;

  constructor(options: IngressSourceOptions) {
    this.#options = options;
    this.#reports = new ShapeReports(
      options.log,
      options.metrics,
      () => (options.timers ?? systemTimers).now(),
    );
  }

  /** True once Ingresses and IngressClasses were listed (or are not served). */
  get synced(): boolean {
    return ["ingresses", "ingressclasses"].every((k) => this.#listed.has(k) || this.#absent.has(k));
  }

  /** Translated resources the validator refused, and Ingress parts that could not be translated. */
  rejected(): RejectedConfig[] {
    return [...this.#rejected];
  }

  /** Whether both kinds were listed, for `/debug/configz`. */
  status(): { readonly synced: boolean; readonly absentKinds: readonly string[] } {
    return { synced: this.synced, absentKinds: [...this.#absent].map((k) => `networking.k8s.io/${k}`) };
  }

  /** Starts both informers; returns at once. */
  start(): void {
    const client = { ...this.#options, log: this.#options.log };
    const keyOf = (o: OrchObject) => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;
    const watch = <T extends OrchObject>(
      kind: string,
      plural: string,
      shape: (raw: unknown) => Shaped<T>,
      put: (o: T) => void,
      drop: (o: OrchObject) => void,
    ) => {
      const path = `/apis/networking.k8s.io/v1/${plural}`;
      // Only an object as far as it has the shape the translation reads is stored; one refused whole is not
      // (it has no key), so what an earlier version stored stays until it is deleted.
      const seen = (raw: OrchObject) => {
        const shaped = shape(raw);
        this.#reports.report(kind, raw, shaped);
        if (shaped.object !== undefined) this.#changed(() => put(shaped.object!));
      };
      this.#informers.push(startInformer(client, {
        what: `networking.k8s.io ${plural}`,
        path,
        list: rawList(this.#options.kubeConfig, path),
        onAdd: seen,
        onUpdate: seen,
        onDelete: (o) => this.#changed(() => drop(o)),
        onListed: () => {
          this.#listed.add(plural);
          this.#absent.delete(plural);
          this.#translate();
        },
        onAbsent: () => {
          this.#absent.add(plural);
          this.#translate();
        },
      }));
    };
    watch(
      "IngressClass",
      "ingressclasses",
      shapeIngressClass,
      (o) => this.#classes.set(o.metadata.name, o.spec?.controller ?? ""),
      (o) => this.#classes.delete(o.metadata?.name ?? ""),
    );
    watch(
      "Ingress",
      "ingresses",
      shapeIngress,
      (o) => this.#ingresses.set(keyOf(o), o),
      (o) => this.#ingresses.delete(keyOf(o)),
    );
  }

  /** Stops both informers. */
  async stop(): Promise<void> {
    await Promise.all(this.#informers.map((i) => i.stop()));
  }

  /** Translates again with the current settings, as after a mesh config change. */
  refresh(): void {
    this.#translate();
  }

  /** The Ingresses the mesh serves now (its class, its controller mode), for their status. */
  meshIngresses(): { namespace: string; name: string }[] {
    const context = { ...this.#options.context(), classes: this.#classes };
    return [...this.#ingresses.values()].filter((i) => isMeshIngress(i, context)).map((i) => ({
      namespace: i.metadata?.namespace ?? "default",
      name: i.metadata?.name ?? "",
    }));
  }

  /** Calls `listener` after every translation; returns the unsubscribe function. */
  onTranslated(listener: () => void): () => void {
    this.#translated.add(listener);
    return () => this.#translated.delete(listener);
  }

  /** Translates again when some backend names its port by name, whose number a service change may move. */
  servicesChanged(): void {
    if (this.#namedPorts) this.#translate();
  }

  #changed(apply: () => void): void {
    apply();
    this.#options.metrics?.counter("discovery_orch_cfg_events").inc({ type: "Ingress", event: "update" });
    this.#translate();
  }

  /** Nothing is written before both kinds were listed: a half-listed cluster would delete and re-add routes. */
  #translate(): void {
    if (!this.synced) return;
    this.#namedPorts = [...this.#ingresses.values()].some((i) =>
      (i.spec?.rules ?? []).some((r) =>
        (r.http?.paths ?? []).some((p) =>
          p.backend?.service?.port?.name !== undefined || typeof p.backend?.servicePort === "string"
        )
      )
    );
    const translation = translateIngresses([...this.#ingresses.values()], {
      ...this.#options.context(),
      classes: this.#classes,
    });
    const rejected: RejectedConfig[] = [];
    const next = new Map<string, Resource>();
    for (const plain of translation.resources) {
      const origin = `${ORIGIN} → ${plain.kind} ${plain.metadata.namespace}/${plain.metadata.name}`;
      const { resource, report } = parseResource(structuredClone(plain), { file: origin, line: 1 }, {
        defaultNamespace: "default",
      });
      if (resource === undefined) {
        rejected.push({
          file: origin,
          line: 1,
          kind: plain.kind,
          namespace: plain.metadata.namespace,
          name: plain.metadata.name,
          errors: report.errors.map((i) =>
            `${origin}: ${i.path === "" ? i.message : `${i.path}: ${i.message}`}`
          ),
        });
        continue;
      }
      next.set(`${plain.kind}/${plain.metadata.namespace}/${plain.metadata.name}`, resource);
    }
    for (const line of translation.skipped) {
      const [where] = line.split(":", 1);
      const [namespace, name] = where.split("/");
      rejected.push({ file: ORIGIN, line: 1, kind: "Ingress", namespace, name, errors: [line] });
    }
    const skipped = translation.skipped.join("\n");
    if (skipped !== this.#lastSkipped && skipped !== "") {
      this.#options.log.warn("ingress parts not translated", { parts: translation.skipped });
    }
    this.#lastSkipped = skipped;
    this.#rejected = rejected;
    for (const [key, resource] of next) {
      const before = this.#written.get(key);
      if (before === undefined || JSON.stringify(before.spec) !== JSON.stringify(resource.spec)) {
        this.#options.store.apply(resource);
      }
    }
    for (const key of this.#written.keys()) {
      if (next.has(key)) continue;
      const [kind, namespace, name] = key.split("/");
      this.#options.store.delete(kind, namespace, name);
    }
    this.#written = next;
    for (const listener of this.#translated) listener();
  }
}
