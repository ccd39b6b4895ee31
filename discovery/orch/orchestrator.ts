import type { LogManager } from "../../shared/log/log_manager.ts";
import type { Metrics } from "../../shared/metrics/metrics.ts";
import type { SyncableConfigStore } from "../config/memory_config_store.ts";
import type * as k8s from "@kubernetes/client-node";
import { limitWatches, loadOrchConfig, RateLimiter } from "./orch_client.ts";
import { OrchConfigSource } from "./orch_config_source.ts";
import { OrchRegistry } from "./orch_registry.ts";
import { OrchSecretStore } from "./orch_secret_store.ts";

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
}

/** The orchestrator's three parts, built on one client and one rate limit; none started. */
export interface Orchestrator {
  /** The client and rate limit the parts share, for the writers and the CA's token review. */
  readonly client: { readonly kubeConfig: k8s.KubeConfig; readonly limiter: RateLimiter };
  /** Services, endpoints, pods and nodes. */
  readonly registry: OrchRegistry;
  /** The mesh's custom resources, into the config store. */
  readonly config: OrchConfigSource;
  /** Gateway credentials, when `secrets` was asked for. */
  readonly secrets?: OrchSecretStore;
}

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
  const registry = new OrchRegistry({
    ...client,
    log: options.logs.scope("orch"),
    metrics: options.metrics,
    domain: options.domain,
    clusterId: options.clusterId,
    get defaultExportTo() {
      return options.defaultExportTo();
    },
    edsForHeadless: options.edsForHeadless,
    useEndpointSlices: options.useEndpointSlices,
    resyncMs: options.resyncMs,
  });
  const secrets = options.secrets
    ? new OrchSecretStore({
      ...client,
      log: options.logs.scope("secretcontroller"),
      onProblem: () => options.metrics.counter("discovery_gateway_credential_errors").inc(),
    })
    : undefined;
  return { client, registry, config, ...(secrets ? { secrets } : {}) };
}
