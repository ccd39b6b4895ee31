/**
 * The orchestrator objects configuration analysis reads (`DISCOVERY_ENABLE_ANALYSIS`), over what is already
 * watched where it can be: the registry's Services, Pods and Namespaces are lent read-only, Secrets come from
 * the gateway credential store's watch when it runs. Only what nothing else watches has an informer of its own:
 * Deployments, custom resource definitions, and the ConfigMaps of the control plane's namespace (the injector's
 * ConfigMap lives there; a watch of every ConfigMap of the cluster would cache them all). Objects kept for
 * analysis alone are slim copies (`analysis_projections.ts`): never a Secret's values.
 *
 * Listeners hear of a change only once every source has been listed (an analysis of a half-listed cluster would
 * report pods and secrets as missing), then of each change to a field analysis reads.
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import * as k8s from "@kubernetes/client-node";
import type { OrchRegistry } from "./orch_registry.ts";
import type { OrchSecretStore } from "./orch_secret_store.ts";
import { type InformerClient, type RunningInformer, startInformer } from "./resilient_informer.ts";
import {
  type AnalysisObject,
  type AnalysisObjectKind,
  lentObject,
  lentProjection,
  slimConfigMap,
  slimCrd,
  slimDeployment,
  slimSecret,
} from "./analysis_projections.ts";

/** What {@link OrchAnalysisObjects} reads. */
export interface OrchAnalysisObjectsOptions extends InformerClient {
  /** Lends its Services, Pods and Namespaces. */
  readonly registry: OrchRegistry;
  /** The gateway credential store, when it runs: its Secret watch is shared. */
  readonly secrets?: OrchSecretStore;
  /** `--namespace`: the control plane's namespace, whose ConfigMaps hold the injector's. */
  readonly namespace: string;
}

type Owned = "Deployment" | "Secret" | "ConfigMap" | "CustomResourceDefinition";
const LENT = { Pod: "Pods", Service: "Services", Namespace: "Namespaces" } as const;
const LENT_KIND = { Pods: "Pod", Services: "Service", Namespaces: "Namespace" } as const;

/** The orchestrator's objects for analysis, by kind; implements analysis' `OrchestratorObjects`. */
export class OrchAnalysisObjects {
  readonly #options: OrchAnalysisObjectsOptions;
  readonly #owned = new Map<Owned, Map<string, AnalysisObject>>([
    ["Deployment", new Map()],
    ["Secret", new Map()],
    ["ConfigMap", new Map()],
    ["CustomResourceDefinition", new Map()],
  ]);
  readonly #listeners = new Set<() => void>();
  readonly #informers: RunningInformer[] = [];
  readonly #unsubscribe: (() => void)[] = [];
  /** Sources not listed yet: the registry, Secrets, and each informer of its own. */
  readonly #pending = new Set<string>(["registry", "Secrets"]);
  #synced = false;
  #stopped = false;

  /** Subscribes to the shared watches at once, so no event between now and `start` is missed. */
  constructor(options: OrchAnalysisObjectsOptions) {
    this.#options = options;
    this.#unsubscribe.push(options.registry.onWatchedChange((kind, before, after) => {
      const lent = LENT_KIND[kind];
      if (!isDeepStrictEqual(lentProjection(lent, before), lentProjection(lent, after))) this.#changed();
    }));
    if (options.secrets) {
      this.#unsubscribe.push(
        options.secrets.onSecretEvent((object, gone) => this.#file("Secret", object, gone)),
      );
    }
  }

  /** True once every source has been listed. */
  get synced(): boolean {
    return this.#synced;
  }

  /** Every object of a kind, in any order. */
  list(kind: AnalysisObjectKind): readonly AnalysisObject[] {
    if (kind === "Pod" || kind === "Service" || kind === "Namespace") {
      return [...this.#options.registry.watched(LENT[kind])].map((raw) => lentObject(kind, raw));
    }
    return [...this.#owned.get(kind)!.values()];
  }

  /** Calls `listener` once all is listed, then on every change analysis would see; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts the informers of its own; returns at once. */
  start(): void {
    const { kubeConfig, namespace } = this.#options;
    const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
    const apps = kubeConfig.makeApiClient(k8s.AppsV1Api);
    const crds = kubeConfig.makeApiClient(k8s.ApiextensionsV1Api);
    this.#watch("Deployment", "/apis/apps/v1/deployments", () => apps.listDeploymentForAllNamespaces());
    this.#watch(
      "CustomResourceDefinition",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      () => crds.listCustomResourceDefinition(),
    );
    this.#watch(
      "ConfigMap",
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`,
      () => core.listNamespacedConfigMap({ namespace }),
    );
    if (this.#options.secrets) {
      void this.#options.secrets.listed.then(() => this.#listed("Secrets"));
    } else {
      this.#watch("Secret", "/api/v1/secrets", () => core.listSecretForAllNamespaces(), "Secrets");
    }
    void this.#options.registry.initiallySynced.then(() => this.#listed("registry"));
  }

  /** Stops its informers and leaves the shared watches. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    await Promise.all(this.#informers.map((informer) => informer.stop()));
  }

  #watch(kind: Owned, path: string, list: () => Promise<unknown>, source: string = kind): void {
    this.#pending.add(source);
    this.#informers.push(startInformer(this.#options, {
      what: `${kind}s (analysis)`,
      path,
      list,
      onAdd: (o) => this.#file(kind, o, false),
      onUpdate: (o) => this.#file(kind, o, false),
      onDelete: (o) => this.#file(kind, o, true),
      onListed: () => this.#listed(source),
      // A kind the orchestrator does not serve has no objects: analysis need not wait for it.
      onAbsent: () => this.#listed(source),
    }));
  }

  #file(kind: Owned, raw: unknown, gone: boolean): void {
    const meta = (raw as { metadata?: { name?: string; namespace?: string } }).metadata;
    const key = `${meta?.namespace ?? ""}/${meta?.name ?? ""}`;
    const objects = this.#owned.get(kind)!;
    const slim = gone ? undefined : SLIM[kind](raw);
    const before = objects.get(key);
    if (slim === undefined) objects.delete(key);
    else objects.set(key, slim);
    if (!isDeepStrictEqual(before, slim)) this.#changed();
  }

  #listed(source: string): void {
    if (!this.#pending.delete(source) || this.#pending.size > 0 || this.#stopped) return;
    this.#synced = true;
    this.#changed();
  }

  #changed(): void {
    if (!this.#synced || this.#stopped) return;
    for (const listener of [...this.#listeners]) listener();
  }
}

const SLIM: Readonly<Record<Owned, (raw: unknown) => AnalysisObject | undefined>> = {
  Deployment: slimDeployment,
  Secret: slimSecret,
  ConfigMap: slimConfigMap,
  CustomResourceDefinition: slimCrd,
};
