/**
 * The mesh's root certificate in every namespace, as the reference's namespace controller keeps it: a ConfigMap
 * `mesh-ca-root-cert` (label `mesh.io/config: "true"`) whose `root-cert.pem` holds the CA's trusted roots, so a
 * workload verifies the control plane whatever its namespace. It is created for each namespace that is not
 * terminating, put back when deleted, its key restored when edited (other keys are left alone), and rewritten in
 * every namespace when the roots change (`rootsChanged`). The reference excludes no namespace, nor does this.
 * Only the replica leading the namespace controller duty writes.
 *
 * @module
 */
import * as k8s from "@kubernetes/client-node";
import type { DutyGate } from "@mesh/shared/lifecycle/duty_gate";
import {
  type InformerClient,
  type OrchObject,
  type RunningInformer,
  startInformer,
} from "./resilient_informer.ts";
import { KeyedWorkQueue } from "./work_queue.ts";
import { rawList } from "./orch_raw_list.ts";

/** The ConfigMap's name in every namespace. */
export const ROOT_CERT_CONFIG_MAP = "mesh-ca-root-cert";
/** The key holding the roots, PEM. */
export const ROOT_CERT_KEY = "root-cert.pem";
/** The label marking the ConfigMap as the mesh's. */
const CONFIG_LABEL = { "mesh.io/config": "true" };

/** What the controller needs. */
export interface RootCertConfigMapsOptions extends InformerClient {
  /** The duty whose leader writes (`DUTIES.namespaceController`). */
  readonly gate: DutyGate;
  /** The CA's trusted roots, PEM; empty when none is known (nothing is written then). */
  readonly rootsPem: () => string;
}

type NamespaceObject = OrchObject & { status?: { phase?: string } };

function isStatus(error: unknown, code: number): boolean {
  return (error as { code?: unknown }).code === code;
}

/** Watches namespaces and the root-certificate ConfigMaps and keeps one, current, in each namespace. */
export class RootCertConfigMaps {
  readonly #options: RootCertConfigMapsOptions;
  readonly #core: k8s.CoreV1Api;
  readonly #queue: KeyedWorkQueue;
  /** Namespaces seen and not terminating. */
  readonly #namespaces = new Set<string>();
  #informers: RunningInformer[] = [];
  #release?: () => void;

  constructor(options: RootCertConfigMapsOptions) {
    this.#options = options;
    this.#core = options.kubeConfig.makeApiClient(k8s.CoreV1Api);
    this.#queue = new KeyedWorkQueue((namespace) => this.#ensure(namespace), options.log, options);
  }

  /** Watches while this replica leads the duty; returns at once. */
  start(): void {
    const namespaceChanged = (object: OrchObject) => {
      const name = object.metadata?.name;
      // A name that is not one (a broken or hostile API server's) would be written to as a path.
      if (typeof name !== "string" || name === "" || name.includes("/")) return;
      if ((object as NamespaceObject).status?.phase === "Terminating") {
        this.#namespaces.delete(name);
        return;
      }
      this.#namespaces.add(name);
      this.#queue.add(name);
    };
    const configMapChanged = (object: OrchObject) => {
      const namespace = object.metadata?.namespace ?? "";
      if (object.metadata?.name === ROOT_CERT_CONFIG_MAP && this.#namespaces.has(namespace)) {
        this.#queue.add(namespace);
      }
    };
    this.#release = this.#options.gate.whileLeading((signal) => {
      const informers = [
        startInformer(this.#options, {
          what: "Namespaces",
          path: "/api/v1/namespaces",
          list: rawList(this.#options.kubeConfig, "/api/v1/namespaces"),
          onAdd: namespaceChanged,
          onUpdate: namespaceChanged,
          onDelete: (object) => this.#namespaces.delete(object.metadata?.name ?? ""),
        }),
        startInformer(this.#options, {
          what: "ConfigMaps",
          path: "/api/v1/configmaps",
          list: rawList(this.#options.kubeConfig, "/api/v1/configmaps"),
          onAdd: configMapChanged,
          onUpdate: configMapChanged,
          onDelete: configMapChanged,
        }),
      ];
      this.#informers = informers;
      // A replica that leads again lists afresh: what it saw before may be stale by then.
      signal.addEventListener("abort", () => {
        for (const informer of informers) void informer.stop();
        this.#namespaces.clear();
      }, { once: true });
    });
  }

  /** The roots changed (rotation): rewrite every namespace's ConfigMap. */
  rootsChanged(): void {
    for (const namespace of this.#namespaces) this.#queue.add(namespace);
  }

  /** Resolves when no write is queued or running. */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  /** Stops watching and writing. */
  async stop(): Promise<void> {
    this.#release?.();
    await this.#queue.stop();
    await Promise.all(this.#informers.map((informer) => informer.stop()));
  }

  async #ensure(namespace: string): Promise<void> {
    const roots = this.#options.rootsPem();
    if (!this.#options.gate.leading() || roots === "" || !this.#namespaces.has(namespace)) return;
    const name = ROOT_CERT_CONFIG_MAP;
    let current: k8s.V1ConfigMap | undefined;
    try {
      await this.#options.limiter.acquire();
      current = await this.#core.readNamespacedConfigMap({ name, namespace });
    } catch (error) {
      if (!isStatus(error, 404)) throw error;
    }
    if (current === undefined) {
      try {
        await this.#options.limiter.acquire();
        await this.#core.createNamespacedConfigMap({
          namespace,
          body: { metadata: { name, namespace, labels: CONFIG_LABEL }, data: { [ROOT_CERT_KEY]: roots } },
        });
      } catch (error) {
        // The namespace went away meanwhile: nothing to keep there.
        if (isStatus(error, 404)) return;
        throw error;
      }
      this.#options.log.info("root certificate ConfigMap created", { namespace, name });
      return;
    }
    if (current.data?.[ROOT_CERT_KEY] === roots) return;
    current.data = { ...current.data, [ROOT_CERT_KEY]: roots };
    await this.#options.limiter.acquire();
    await this.#core.replaceNamespacedConfigMap({ name, namespace, body: current });
    this.#options.log.info("root certificate ConfigMap updated", { namespace, name });
  }
}
