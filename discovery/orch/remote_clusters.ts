/**
 * Remote clusters from Secrets (the reference's secret controller): every Secret in `--clusterRegistriesNamespace`
 * labelled `mesh/multiCluster=true` holds, under each data key, a cluster id and that cluster's kubeconfig. Each
 * such cluster gets an orchestrator registry of its own (services, endpoints or slices, pods, nodes; never
 * config), added to the aggregate while the key exists, replaced when its kubeconfig changes, removed when the
 * key or the Secret goes.
 *
 * Work that must run against every remote cluster (the writers of an external control plane, `EXTERNAL_MESHD`)
 * is attached with `attach`: it starts for each cluster added and stops when the cluster goes or is replaced.
 *
 * A key that cannot be used is refused alone, logged once and counted (`discovery_remote_cluster_errors`):
 * a kubeconfig that does not parse or names no server (a cluster already added from it stays as it was), a
 * cluster id another Secret already added or that is the server's own (`CLUSTER_ID`). A cluster whose API
 * server cannot be reached is kept and retried with backoff by its informers; it never holds back the local
 * cluster's readiness (its registry is added as remote), and `/debug/clusterz` shows it as unreachable.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type * as k8s from "@kubernetes/client-node";
import type { LogFields, Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { ServiceRegistry } from "../registry/service_registry.ts";
import type { OrchRegistry } from "./orch_registry.ts";
import type { RateLimiter } from "./rate_limiter.ts";
import { type OrchObject, type RunningInformer, startInformer } from "./resilient_informer.ts";
import { rawList } from "./orch_raw_list.ts";
import { parseRemoteKubeconfig } from "./remote_kubeconfig.ts";

/** The label that marks a Secret as holding remote clusters' kubeconfigs (the reference's `istio/multiCluster`). */
export const MULTI_CLUSTER_LABEL = "mesh/multiCluster";

/** Why a remote cluster was refused or is not served, the `reason` of `discovery_remote_cluster_errors`. */
export type RemoteClusterProblem = "kubeconfig" | "duplicate_cluster_id" | "unreachable";

/** Where remote registries go: the aggregate registry. */
export interface RemoteRegistrySink {
  /** Adds a remote cluster's registry. */
  addRegistry(registry: ServiceRegistry, options: { readonly remote: true }): void;
  /** Removes it again. */
  removeRegistry(registry: ServiceRegistry): void;
}

/** A remote cluster as handed to attached work: its id and a client of its own. */
export interface AttachedCluster {
  /** The cluster id (the Secret's data key). */
  readonly clusterId: string;
  /** A client of the cluster, with a rate limit apart from its registry's. */
  readonly client: { readonly kubeConfig: k8s.KubeConfig; readonly limiter: RateLimiter };
}

/** Work started for one remote cluster; returns what stops it. */
export type ClusterAttachment = (cluster: AttachedCluster) => () => void | Promise<void>;

/** What the remote clusters need. */
export interface RemoteClustersOptions {
  /** The local cluster's client, which the Secrets are read with. */
  readonly kubeConfig: k8s.KubeConfig;
  /** The local client's rate limit. */
  readonly limiter: RateLimiter;
  /** `--clusterRegistriesNamespace`. */
  readonly namespace: string;
  /** `CLUSTER_ID` (or `--clusterID`): the cluster this server runs in, which no Secret may name. */
  readonly localClusterId: string;
  readonly log: Logger;
  readonly metrics?: Metrics;
  /**
   * Builds (does not start) the registry of one remote cluster from its kubeconfig; `onFailure` is told of each
   * failed list or watch.
   */
  readonly createRegistry: (
    clusterId: string,
    kubeConfig: k8s.KubeConfig,
    onFailure: (kind: string, error: unknown) => void,
  ) => OrchRegistry;
  /** Builds the client attached work uses; without it, the cluster's kubeconfig paced by `limiter`. */
  readonly createClient?: (kubeConfig: k8s.KubeConfig) => AttachedCluster["client"];
  /** First retry delay of the Secret informer. */
  readonly retryMs?: number;
  /** The clock of `addedAt`; the system's when absent. */
  readonly now?: () => Date;
}

/** One remote cluster as `/debug/clusterz` shows it. */
export interface RemoteClusterStatus {
  /** The cluster id (the Secret's data key). */
  readonly clusterId: string;
  /** The Secret it came from, `namespace/name`. */
  readonly secret: string;
  /** The API server its kubeconfig names. */
  readonly server: string;
  /**
   * `synced` once every informer listed (a later failure shows in `failures` and `lastError`; the state last
   * read stays served); `unreachable` after a failure before that; else `syncing`.
   */
  readonly state: "syncing" | "synced" | "unreachable";
  /** Services its registry holds. */
  readonly services: number;
  /** Failed lists or watches since it was added. */
  readonly failures: number;
  /** The last failure, when there was one. */
  readonly lastError?: string;
  /** When it was added (ISO 8601). */
  readonly addedAt: string;
}

interface RemoteCluster {
  readonly clusterId: string;
  readonly secret: string;
  readonly kubeconfig: string;
  readonly server: string;
  readonly orch: OrchRegistry;
  readonly kubeConfig: k8s.KubeConfig;
  readonly addedAt: string;
  /** What stops each attachment's work for this cluster. */
  readonly detach: Map<ClusterAttachment, () => void | Promise<void>>;
  failures: number;
  lastError?: string;
}

type SecretObject = OrchObject & {
  metadata?: { labels?: Record<string, string> };
  data?: Record<string, string>;
};

/** Watches the cluster Secrets and keeps one registry per remote cluster in the aggregate. */
export class RemoteClusters {
  readonly #options: RemoteClustersOptions;
  readonly #sink: RemoteRegistrySink;
  readonly #clusters = new Map<string, RemoteCluster>();
  /** Each labelled Secret's clusters as last read: cluster id → kubeconfig text (null: a value not a string). */
  readonly #secrets = new Map<string, Map<string, string | null>>();
  /** The problem last reported per `secret|cluster`, so each is logged and counted once. */
  readonly #problems = new Map<string, string>();
  readonly #attachments = new Set<ClusterAttachment>();
  #informer?: RunningInformer;
  #listed = false;
  #stopped = false;

  /** Remote clusters that will go to `sink`; nothing is read before `start`. */
  constructor(options: RemoteClustersOptions, sink: RemoteRegistrySink) {
    this.#options = options;
    this.#sink = sink;
  }

  /** True once the Secrets present at start were read (their clusters may still be syncing). */
  get listed(): boolean {
    return this.#listed;
  }

  /** Starts watching the Secrets; returns at once. */
  start(): void {
    const namespace = this.#options.namespace;
    this.#informer = startInformer(this.#options, {
      what: "Secrets",
      path: `/api/v1/namespaces/${namespace}/secrets`,
      list: rawList(
        this.#options.kubeConfig,
        `/api/v1/namespaces/${namespace}/secrets`,
        `labelSelector=${encodeURIComponent(`${MULTI_CLUSTER_LABEL}=true`)}`,
      ),
      onAdd: (o) => this.#secretChanged(o as SecretObject, false),
      onUpdate: (o) => this.#secretChanged(o as SecretObject, false),
      onDelete: (o) => this.#secretChanged(o as SecretObject, true),
      onListed: () => {
        this.#listed = true;
      },
    });
  }

  /** Stops watching and stops every remote registry (they stay in the aggregate, as the server is stopping). */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#informer?.stop();
    await Promise.all([...this.#clusters.values()].map((c) => this.#detachAll(c)));
    await Promise.all([...this.#clusters.values()].map((c) => c.orch.stop()));
  }

  /**
   * Runs `work` for every remote cluster, those added now and later, until the returned function is called; a
   * cluster that goes or is replaced stops its run first.
   */
  attach(work: ClusterAttachment): () => Promise<void> {
    this.#attachments.add(work);
    for (const cluster of this.#clusters.values()) this.#attachOne(cluster, work);
    return async () => {
      this.#attachments.delete(work);
      await Promise.all([...this.#clusters.values()].map((cluster) => {
        const stop = cluster.detach.get(work);
        cluster.detach.delete(work);
        return stop?.();
      }));
    };
  }

  #attachOne(cluster: RemoteCluster, work: ClusterAttachment): void {
    const client = this.#options.createClient?.(cluster.kubeConfig) ??
      { kubeConfig: cluster.kubeConfig, limiter: this.#options.limiter };
    cluster.detach.set(work, work({ clusterId: cluster.clusterId, client }));
  }

  async #detachAll(cluster: RemoteCluster): Promise<void> {
    const stops = [...cluster.detach.values()];
    cluster.detach.clear();
    await Promise.all(stops.map((stop) => stop()));
  }

  /** Every remote cluster, sorted by id. */
  status(): RemoteClusterStatus[] {
    return [...this.#clusters.values()].sort((a, b) => a.clusterId.localeCompare(b.clusterId)).map((c) => {
      const synced = c.orch.registry.hasSynced();
      return {
        clusterId: c.clusterId,
        secret: c.secret,
        server: c.server,
        state: synced ? "synced" : c.failures > 0 ? "unreachable" : "syncing",
        services: c.orch.registry.services().length,
        failures: c.failures,
        ...(c.lastError === undefined ? {} : { lastError: c.lastError }),
        addedAt: c.addedAt,
      };
    });
  }

  #secretChanged(object: SecretObject, gone: boolean): void {
    if (this.#stopped) return;
    const key = `${object.metadata?.namespace ?? this.#options.namespace}/${object.metadata?.name ?? ""}`;
    // The test server and some clients ignore the label selector: the label is checked here as well.
    const labelled = object.metadata?.labels?.[MULTI_CLUSTER_LABEL] === "true";
    const wanted = new Map<string, string | null>();
    const data: unknown = object.data;
    if (!gone && labelled && data !== null && typeof data === "object" && !Array.isArray(data)) {
      for (const [clusterId, value] of Object.entries(data)) {
        // A value that is not a string (the typed list's "base64" check is gone) is refused for its key alone.
        wanted.set(
          clusterId,
          typeof value === "string" ? Buffer.from(value, "base64").toString("utf8") : null,
        );
      }
    }
    if (wanted.size === 0) this.#secrets.delete(key);
    else this.#secrets.set(key, wanted);
    this.#apply(key);
  }

  /** Brings the clusters of Secret `key` in line with what it holds now. */
  #apply(key: string): void {
    const wanted = this.#secrets.get(key) ?? new Map<string, string | null>();
    for (const cluster of [...this.#clusters.values()]) {
      if (cluster.secret === key && !wanted.has(cluster.clusterId)) {
        this.#remove(cluster, "its Secret key is gone");
      }
    }
    for (const problem of [...this.#problems.keys()]) {
      if (problem.startsWith(`${key}|`) && !wanted.has(problem.slice(key.length + 1))) {
        this.#problems.delete(problem);
      }
    }
    for (const [clusterId, kubeconfig] of wanted) this.#applyCluster(key, clusterId, kubeconfig);
  }

  #applyCluster(secret: string, clusterId: string, kubeconfig: string | null): void {
    const fields = { secret, cluster: clusterId };
    if (clusterId === this.#options.localClusterId) {
      this.#refuse(
        fields,
        "duplicate_cluster_id",
        `Secret "${secret}" names cluster "${clusterId}", the cluster this server runs in (CLUSTER_ID); ` +
          `expected the id of a remote cluster`,
      );
      return;
    }
    const existing = this.#clusters.get(clusterId);
    if (existing !== undefined && existing.secret !== secret) {
      this.#refuse(
        fields,
        "duplicate_cluster_id",
        `Secret "${secret}" names cluster "${clusterId}", already added from Secret "${existing.secret}"; ` +
          `expected each cluster id in one Secret only`,
      );
      return;
    }
    if (existing?.kubeconfig === kubeconfig) return;
    if (kubeconfig === null) {
      this.#refuse(
        fields,
        "kubeconfig",
        `Secret "${secret}" key "${clusterId}" is not a usable kubeconfig (its data value is not a string); ` +
          `expected base64 text` + (existing ? `; keeping the cluster as last added` : ""),
      );
      return;
    }
    const parsed = parseRemoteKubeconfig(kubeconfig);
    if (parsed.error !== undefined) {
      this.#refuse(
        fields,
        "kubeconfig",
        `Secret "${secret}" key "${clusterId}" is not a usable kubeconfig (${parsed.error}); ` +
          `expected a kubeconfig whose current context names a cluster with a "server"` +
          (existing ? `; keeping the cluster as last added` : ""),
      );
      return;
    }
    const { kubeConfig, server } = parsed;
    this.#problems.delete(`${secret}|${clusterId}`);
    if (existing !== undefined) this.#remove(existing, "its kubeconfig changed", false);
    const log = this.#options.log;
    const cluster: RemoteCluster = {
      clusterId,
      secret,
      kubeconfig,
      server,
      kubeConfig,
      detach: new Map(),
      addedAt: (this.#options.now?.() ?? new Date()).toISOString(),
      failures: 0,
      orch: this.#options.createRegistry(clusterId, kubeConfig, (kind, error) => {
        if (this.#clusters.get(clusterId) !== cluster) return;
        cluster.failures++;
        const text = error instanceof Error ? error.message : String(error);
        cluster.lastError = `${kind}: ${text}`.slice(0, 200);
        // Counted and logged once per cluster added; later failures are retried and shown by /debug/clusterz.
        if (cluster.failures === 1) {
          this.#count("unreachable");
          log.warn("remote cluster cannot be reached; retrying with backoff, the local cluster is served", {
            ...fields,
            server,
            error: cluster.lastError,
          });
        }
      }),
    };
    this.#clusters.set(clusterId, cluster);
    this.#sink.addRegistry(cluster.orch.serviceRegistry, { remote: true });
    cluster.orch.start();
    for (const work of this.#attachments) this.#attachOne(cluster, work);
    this.#options.metrics?.gauge("discovery_remote_clusters").set(this.#clusters.size);
    log.info("remote cluster added", { ...fields, server, clusters: this.#clusters.size });
  }

  #remove(cluster: RemoteCluster, why: string, offerOthers = true): void {
    this.#clusters.delete(cluster.clusterId);
    this.#sink.removeRegistry(cluster.orch.serviceRegistry);
    this.#detachAll(cluster).catch(() => {});
    cluster.orch.stop().catch(() => {});
    this.#options.metrics?.gauge("discovery_remote_clusters").set(this.#clusters.size);
    this.#options.log.info("remote cluster removed", {
      secret: cluster.secret,
      cluster: cluster.clusterId,
      why,
      clusters: this.#clusters.size,
    });
    // Another Secret naming the same id was refused while this one had it: it may be added now.
    if (!offerOthers) return;
    for (const [key, wanted] of this.#secrets) {
      if (key !== cluster.secret && wanted.has(cluster.clusterId)) {
        this.#problems.delete(`${key}|${cluster.clusterId}`);
        this.#applyCluster(key, cluster.clusterId, wanted.get(cluster.clusterId)!);
      }
    }
  }

  #refuse(
    fields: LogFields & { secret: string; cluster: string },
    reason: RemoteClusterProblem,
    message: string,
  ) {
    const key = `${fields.secret}|${fields.cluster}`;
    if (this.#problems.get(key) === message) return;
    this.#problems.set(key, message);
    this.#count(reason);
    this.#options.log.error(message, { ...fields, reason });
  }

  #count(reason: RemoteClusterProblem): void {
    this.#options.metrics?.counter("discovery_remote_cluster_errors").inc({ reason });
  }
}
