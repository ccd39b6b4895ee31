import type { LogManager } from "@mesh/shared/log/log_manager";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { SyncableConfigStore } from "../config/memory_config_store.ts";
import type * as k8s from "@kubernetes/client-node";
import { limitWatches, loadOrchConfig } from "./orch_client.ts";
import { RateLimiter } from "./rate_limiter.ts";
import { type OrchHttp, orchHttp } from "./orch_http.ts";
import { OrchCsrSigner, type OrchCsrSignerOptions } from "./orch_csr_signer.ts";
import { OrchConfigSource } from "./orch_config_source.ts";
import { OrchRegistry } from "./orch_registry.ts";
import { OrchSecretStore } from "./orch_secret_store.ts";
import { IngressConfigSource } from "./ingress_source.ts";
import type { IngressMeshSettings } from "./ingress_convert.ts";
import { RemoteClusters, type RemoteRegistrySink } from "./remote_clusters.ts";
import type { LeaseApi } from "./lease_record.ts";
import { orchLeaseApi } from "./orch_lease_api.ts";
import type { WorkloadEntryWriter } from "../model/workload_entry_writer.ts";
import { orchWorkloadEntryWriter } from "./orch_workload_entries.ts";
import { OrchAnalysisObjects } from "./orch_analysis_objects.ts";

/** What reading the orchestrator needs: its client settings and the collaborators of its three parts. */
export interface OrchestratorOptions {
  /** `--orchconfig`; empty for the in-cluster configuration. */
  readonly orchConfig: string;
  /** `ORCH_SERVICE_HOST`, the in-cluster API server. */
  readonly serviceHost: string;
  /** `--orchApiQPS`: one budget shared by the three parts. */
  readonly qps: number;
  /** `--orchApiBurst`. */
  readonly burst: number;
  /** Where the mesh's custom resources go. */
  readonly store: SyncableConfigStore;
  /** True when no other config source marks the store synced. */
  readonly marksStoreSynced: boolean;
  /** Owner of the parts' log scopes. */
  readonly logs: LogManager;
  /** Where the parts' metrics go. */
  readonly metrics: Metrics;
  /** `--domain`. */
  readonly domain: string;
  /** `--clusterID`. */
  readonly clusterId: string;
  /** Mesh `defaultServiceExportTo`, read when a service is converted. */
  readonly defaultExportTo: () => readonly string[];
  /** `DISCOVERY_ENABLE_EDS_FOR_HEADLESS_SERVICES`. */
  readonly edsForHeadless: boolean;
  /** `DISCOVERY_USE_ENDPOINT_SLICE`. */
  readonly useEndpointSlices: boolean;
  /** `--resync`. */
  readonly resyncMs: number;
  /** `MESHD_ENABLE_SDS_SERVER`: read the Secrets gateways name. */
  readonly secrets: boolean;
  /** Orchestrator Ingresses: where their Gateways go and the mesh settings that pick and shape them. */
  readonly ingress: {
    /** `ORCH_INGRESS_NS`, else the mesh's root namespace. */
    readonly namespace: string;
    readonly mesh: () => IngressMeshSettings;
  };
  /** `--clusterRegistriesNamespace`: where remote clusters' Secrets are read; empty: no remote clusters. */
  readonly clusterRegistriesNamespace?: string;
}

/** The orchestrator's parts, built on one client and one rate limit; none started. */
export interface Orchestrator {
  /** The client and rate limit the parts share, for the writers and the CA's token review. */
  readonly client: { readonly kubeConfig: k8s.KubeConfig; readonly limiter: RateLimiter };
  /** Services, endpoints, pods and nodes. */
  readonly registry: OrchRegistry;
  /** The mesh's custom resources, into the config store. */
  readonly config: OrchConfigSource;
  /** Gateway credentials, when `secrets` was asked for. */
  readonly secrets?: OrchSecretStore;
  /** Ingresses translated into Gateways and VirtualServices, into the config store. */
  readonly ingress: IngressConfigSource;
  /**
   * Builds the remote clusters that feed `sink` (when `clusterRegistriesNamespace` is set); call once, after the
   * aggregate exists.
   */
  readonly remoteClusters?: (sink: RemoteRegistrySink) => RemoteClusters;
  /** Lease calls for leader election, on the same client and rate limit. */
  readonly leases: LeaseApi;
  /** Where auto-registered WorkloadEntries are written. */
  readonly workloadEntries: WorkloadEntryWriter;
  /** Plain requests with the same credentials, each ended after `timeoutMs` (status, the CSR signer). */
  http(timeoutMs: number): OrchHttp;
  /**
   * The objects configuration analysis reads, over the registry's and the secret store's watches; `namespace`
   * is the control plane's. Build it before those start, once, and only when analysis runs.
   */
  analysisObjects(namespace: string): OrchAnalysisObjects;
  /** The signer of workload CSRs through the CertificateSigningRequest API (`EXTERNAL_CA`). */
  csrSigner(options: Omit<OrchCsrSignerOptions, "http">): OrchCsrSigner;
}

/** The deadline of each request the CSR signer makes (the signing as a whole has its own). */
const CSR_REQUEST_TIMEOUT_MS = 10_000;

/** Builds the orchestrator's registry, config source and secret store; a bad client configuration throws. */
export function createOrchestrator(options: OrchestratorOptions): Orchestrator {
  const limiter = new RateLimiter(options.qps, options.burst);
  const kubeConfig = limitWatches(
    loadOrchConfig({ orchConfig: options.orchConfig, serviceHost: options.serviceHost }),
    limiter,
  );
  const client = { kubeConfig, limiter };
  const config = new OrchConfigSource({
    ...client,
    store: options.store,
    log: options.logs.scope("source"),
    metrics: options.metrics,
    marksStoreSynced: options.marksStoreSynced,
  });
  const registry = orchRegistry(options, client, options.clusterId);
  const secrets = options.secrets
    ? new OrchSecretStore({
      ...client,
      log: options.logs.scope("secretcontroller"),
      onProblem: () => options.metrics.counter("discovery_gateway_credential_errors").inc(),
    })
    : undefined;
  const services = registry.serviceRegistry;
  const ingress = new IngressConfigSource({
    ...client,
    store: options.store,
    log: options.logs.scope("source"),
    metrics: options.metrics,
    context: () => ({
      mesh: options.ingress.mesh(),
      domain: options.domain,
      ingressNamespace: options.ingress.namespace,
      namedPort: (namespace, service, port) =>
        services.getService(`${service}.${namespace}.svc.${options.domain}`, namespace)?.ports
          .find((p) => p.name === port)?.port,
    }),
  });
  // A backend may name its service's port by name: a service change can resolve or move it.
  services.onServiceEvent(() => ingress.servicesChanged());
  const namespace = options.clusterRegistriesNamespace ?? "";
  const remoteClusters = namespace === "" ? undefined : (sink: RemoteRegistrySink) =>
    new RemoteClusters({
      ...client,
      namespace,
      localClusterId: options.clusterId,
      log: options.logs.scope("secretcontroller"),
      metrics: options.metrics,
      // Each remote cluster has a client and a rate limit of its own, and reads no config.
      createRegistry: (clusterId, kubeConfig, onFailure) => {
        const limiter = new RateLimiter(options.qps, options.burst);
        return orchRegistry(
          options,
          { kubeConfig: limitWatches(kubeConfig, limiter), limiter, onFailure },
          clusterId,
        );
      },
      // The writers of an external control plane (EXTERNAL_MESHD): a budget apart from the cluster's informers'.
      createClient: (kubeConfig) => {
        const limiter = new RateLimiter(options.qps, options.burst);
        return { kubeConfig: limitWatches(kubeConfig, limiter), limiter };
      },
    }, sink);
  // Their own client: the informers' limiter paces every request made through theirs, and status and CSRs
  // keep budgets of their own.
  const http = (timeoutMs: number) =>
    orchHttp(loadOrchConfig({ orchConfig: options.orchConfig, serviceHost: options.serviceHost }), timeoutMs);
  return {
    client,
    registry,
    config,
    ingress,
    http,
    analysisObjects: (namespace) =>
      new OrchAnalysisObjects({
        ...client,
        registry,
        ...(secrets ? { secrets } : {}),
        namespace,
        log: options.logs.scope("analysis"),
      }),
    csrSigner: (signer) => new OrchCsrSigner({ ...signer, http: http(CSR_REQUEST_TIMEOUT_MS) }),
    ...(secrets ? { secrets } : {}),
    ...(remoteClusters ? { remoteClusters } : {}),
    leases: orchLeaseApi(kubeConfig, limiter),
    // A bucket of its own: a storm of registering proxies must not starve the watches and the elections.
    workloadEntries: orchWorkloadEntryWriter(kubeConfig, new RateLimiter(options.qps, options.burst)),
  };
}

/** The registry of one cluster (the local one or a remote) on `client`. */
function orchRegistry(
  options: OrchestratorOptions,
  client: {
    readonly kubeConfig: k8s.KubeConfig;
    readonly limiter: RateLimiter;
    readonly onFailure?: (kind: string, error: unknown) => void;
  },
  clusterId: string,
): OrchRegistry {
  return new OrchRegistry({
    ...client,
    log: options.logs.scope("orch"),
    metrics: options.metrics,
    domain: options.domain,
    clusterId,
    get defaultExportTo() {
      return options.defaultExportTo();
    },
    edsForHeadless: options.edsForHeadless,
    useEndpointSlices: options.useEndpointSlices,
    resyncMs: options.resyncMs,
  });
}
