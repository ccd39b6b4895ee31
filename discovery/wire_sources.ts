/**
 * The inputs of the push pipeline, wired for the composition root: the config store and the sources that fill
 * it (the config directory, the orchestrator's custom resources and Ingresses), the mesh config files, the
 * service registries, and the secret stores gateways' credentials come from.
 *
 * @module
 */
import { closingComponent, type Component } from "@mesh/shared/lifecycle";
import type { Logger } from "@mesh/shared/log/logger";
import type { LogManager } from "@mesh/shared/log/log_manager";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { DiscoveryOptions } from "./cli/discovery_options.ts";
import { configDirSettingsFromEnv, FileConfigSource, MemoryConfigStore, MeshWatcher } from "./config/mod.ts";
import type { ConfigSource } from "./model/config_source.ts";
import { DirSecretStore } from "./model/dir_secret_store.ts";
import { mergeSecretStores } from "./model/merged_secret_store.ts";
import type { SecretStore } from "./model/secret_store.ts";
import type { Orchestrator } from "./orch/orchestrator.ts";
import type { RemoteClusters } from "./orch/remote_clusters.ts";
import { buildRegistries, type Registries } from "./registry/build_registries.ts";

/** What the sources are built from. */
export interface SourcesInputs {
  readonly options: DiscoveryOptions;
  readonly logs: LogManager;
  readonly metrics: Metrics;
  /** The `default` scope. */
  readonly log: Logger;
  /** The `model` scope. */
  readonly modelLog: Logger;
}

/** The sources, built but not started, and the components that run them. */
export interface Sources {
  /** The store every config source writes to. */
  readonly store: MemoryConfigStore;
  /** The mesh config and networks files. */
  readonly mesh: MeshWatcher;
  /** The orchestrator, when `--registries` names it. */
  readonly orch?: Orchestrator;
  /** The orchestrator's module, loaded only with it (its client is the largest library of the program). */
  readonly orchModule?: typeof import("./orch/mod.ts");
  /** Config sources by the name `/debug/configz` shows them under. */
  readonly configSources: ReadonlyMap<string, ConfigSource>;
  readonly registries: Registries;
  /** The remote clusters' registries, when their Secrets are read. */
  readonly remoteClusters?: RemoteClusters;
  /** `EXTERNAL_MESHD`: this control plane also keeps the remote clusters' webhooks and root ConfigMaps. */
  readonly external: boolean;
  /** Gateway credentials, from every secret store read. */
  readonly secrets?: SecretStore;
  /** The first source not yet synced (config store, orchestrator config, registries, Ingresses), or undefined. */
  unsynced(): string | undefined;
  /** The config store's sync, the config sources and the mesh files, in start order. */
  configComponents(): Component[];
  /** The registries and the secret stores, in start order. */
  registryComponents(): Component[];
}

/** Builds the config store, its sources, the mesh files, the registries and the secret stores. */
export async function wireSources(w: SourcesInputs): Promise<Sources> {
  const { options, logs, metrics, log, modelLog } = w;
  const { env } = options;
  // Config sources feed one store; the mesh config comes from its own files.
  const store = new MemoryConfigStore({ logger: modelLog });
  const mesh = new MeshWatcher({
    meshConfigFile: options.meshConfigFile,
    networksFile: options.networksConfigFile,
    logger: log,
    metrics,
  });
  const files = options.configDir === "" ? undefined : new FileConfigSource({
    dir: options.configDir,
    store,
    defaultNamespace: "default",
    logger: logs.scope("source"),
    metrics,
    ...configDirSettingsFromEnv(env),
  });
  // The orchestrator, when a registry reads it, is also a config source (the mesh kinds as custom resources)
  // and a secret store. Loaded only when configured: its client is the largest library of the program (some
  // 30 MiB of source, code and objects), which a server of files and other registries never uses.
  const sdsServer = env.bool("MESHD_ENABLE_SDS_SERVER");
  // The orchestrator's modules (its token review and writers too) are loaded only with it.
  let orchModule: typeof import("./orch/mod.ts") | undefined;
  const orch = options.registries.includes("Orchestrator")
    ? (orchModule = await import("./orch/mod.ts")).createOrchestrator({
      orchConfig: options.orchConfig,
      serviceHost: env.string("ORCH_SERVICE_HOST"),
      qps: options.orchApiQps,
      burst: options.orchApiBurst,
      store,
      marksStoreSynced: files === undefined,
      logs,
      metrics,
      domain: options.domain,
      clusterId: options.clusterId,
      defaultExportTo: () => mesh.current().defaultServiceExportTo,
      edsForHeadless: env.bool("DISCOVERY_ENABLE_EDS_FOR_HEADLESS_SERVICES"),
      useEndpointSlices: env.bool("DISCOVERY_USE_ENDPOINT_SLICE"),
      resyncMs: options.resyncMs,
      secrets: sdsServer,
      ingress: { namespace: env.string("ORCH_INGRESS_NS") || "mesh-system", mesh: () => mesh.current() },
      clusterRegistriesNamespace: options.clusterRegistriesNamespace,
    })
    : undefined;
  const configSources = new Map<string, ConfigSource>([
    ...(files ? [["configDir", files] as const] : []),
    ...(orch ? [["orchestrator", orch.config] as const, ["ingress", orch.ingress] as const] : []),
  ]);
  const registries = buildRegistries({
    ...(orch && env.bool("DISCOVERY_ENABLE_SERVICEENTRY_SELECT_PODS") ? { pods: orch.registry.pods } : {}),
    ...(orch ? { factories: { Orchestrator: () => orch.registry.serviceRegistry } } : {}),
    registries: options.registries,
    clusterId: options.clusterId,
    appNamespaces: options.appNamespaces,
    defaultServiceExportTo: () => mesh.current().defaultServiceExportTo,
    store,
    log: modelLog,
  });
  // Remote clusters' registries join the aggregate as their Secrets appear; none holds back readiness.
  const remoteClusters = orch?.remoteClusters?.(registries.aggregate);
  // An external control plane (CENTRAL_MESHD is the reference's older name) also keeps the remote clusters'
  // webhooks and root-certificate ConfigMaps.
  const external = env.bool("EXTERNAL_MESHD") || env.bool("CENTRAL_MESHD");
  if (external && !remoteClusters) {
    log.warn("EXTERNAL_MESHD is on but no remote cluster is read: only the --orchconfig cluster is written", {
      clusterRegistriesNamespace: options.clusterRegistriesNamespace,
    });
  }
  if (orch && env.bool("DISCOVERY_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES")) {
    orch.registry.selectWorkloadEntries(registries.serviceEntries.workloadEntries);
  }
  // Gateway credentials: the orchestrator's Secrets when it is read, then MESHD_GATEWAY_CREDENTIALS_DIR.
  // MESHD_ENABLE_SDS_SERVER=false: gateways get their credentials from their own agent, not from here.
  const credentialsDir = env.string("MESHD_GATEWAY_CREDENTIALS_DIR");
  const dirSecrets = credentialsDir !== "" && sdsServer
    ? new DirSecretStore({
      dir: credentialsDir,
      log: logs.scope("secretcontroller"),
      onProblem: () => metrics.counter("discovery_gateway_credential_errors").inc(),
    })
    : undefined;
  const secrets = mergeSecretStores([orch?.secrets, dirSecrets]);

  // What the sources' readiness checks and the gate of the first complete snapshot both ask.
  const syncChecks = {
    config: () => store.synced ? undefined : "config sources have not loaded yet",
    orchestratorConfig: () =>
      !orch || orch.config.synced
        ? undefined
        : "the orchestrator's custom resources have not been listed yet",
    registries: () =>
      registries.aggregate.hasSynced()
        ? undefined
        : `registries not synced: ${registries.aggregate.unsyncedRegistries().join(", ")}`,
    ingress: () =>
      !orch || orch.ingress.synced ? undefined : "the orchestrator's Ingresses have not been listed yet",
  };

  return {
    store,
    mesh,
    unsynced: () => Object.values(syncChecks).map((check) => check()).find((reason) => reason !== undefined),
    ...(orch ? { orch } : {}),
    ...(orchModule ? { orchModule } : {}),
    configSources,
    registries,
    ...(remoteClusters ? { remoteClusters } : {}),
    external,
    ...(secrets ? { secrets } : {}),
    configComponents: () => [
      {
        name: "config",
        start() {},
        stop() {},
        ready: syncChecks.config,
      },
      ...(files
        ? [{
          name: "configDir",
          start: () => files.start(),
          stop: () => files.stop(),
          ready: () =>
            files.status().state === "watching"
              ? undefined
              : `config directory ${options.configDir} (--configDir) is gone; serving its last loaded config`,
        }]
        : []),
      ...(orch
        ? [{
          name: "orchestrator config",
          start: () => orch.config.start(),
          stop: () => orch.config.stop(),
          ready: syncChecks.orchestratorConfig,
        }]
        : []),
      {
        name: "meshFiles",
        // A mesh config file that exists but is invalid stops startup: serving the defaults instead would
        // silently change the whole mesh's behaviour.
        start: () => mesh.start({ requireValid: true }),
        stop: () => mesh.stop(),
        ready: () => {
          const lost = mesh.status().filter((f) => f.lost).map((f) => f.file);
          return lost.length === 0
            ? undefined
            : `mesh config file gone: ${lost.join(", ")}; serving the config last loaded from it`;
        },
      },
    ],
    registryComponents: () => [
      {
        name: "registries",
        start: () => registries.serviceEntries.start(),
        stop: () => registries.serviceEntries.stop(),
        ready: syncChecks.registries,
      },
      ...(orch
        ? [{
          name: "orchestrator registry",
          start: () => orch.registry.start(),
          stop: () => orch.registry.stop(),
        }]
        : []),
      ...(orch
        ? [{
          ...closingComponent("orchestrator ingress", () => {
            orch.ingress.start();
            return [() => orch.ingress.stop(), mesh.onChange(() => orch.ingress.refresh())];
          }),
          ready: syncChecks.ingress,
        }]
        : []),
      ...(remoteClusters
        ? [{
          name: "remote clusters",
          start: () => remoteClusters.start(),
          stop: () => remoteClusters.stop(),
        }]
        : []),
      ...(orch?.secrets
        ? [{
          name: "orchestrator secrets",
          start: () => orch.secrets!.start(),
          stop: () => orch.secrets!.stop(),
        }]
        : []),
      ...(dirSecrets
        ? [{ name: "credentials dir", start: () => dirSecrets.start(), stop: () => dirSecrets.stop() }]
        : []),
    ],
  };
}
