import { checkPortsFree } from "@mesh/shared/http/preflight_ports";
import { httpLimitsFromEnv } from "@mesh/shared/http/http_limits_settings";
import type { RunningServer } from "@mesh/shared/http/serve";
import { closingComponent, Lifecycle } from "@mesh/shared/lifecycle";
import type { LogManager } from "@mesh/shared/log/log_manager";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { nativeHeapTrimming } from "@mesh/shared/process/native_heap_trimmer";
import { collectionAfterBurst, exposedFullCollection } from "@mesh/shared/process/collection_after_burst";
import { TrafficMeter } from "@mesh/shared/process/traffic_meter";
import { exportProcessMetrics } from "@mesh/shared/metrics/process_metrics";
import type { BuildInfo } from "@mesh/shared/version/build_info";
import type { DiscoveryOptions } from "./cli/discovery_options.ts";
import { checkMeshFiles } from "./cli/mesh_files_check.ts";
import { PushHistory } from "./push/push_history.ts";
import { Readiness } from "./http/readiness.ts";
import {
  EnvoyFilterReports,
  GeneratorRegistry,
  registerEnvoyGenerators,
  registerGrpcGenerators,
  registerNameTableGenerators,
} from "./generate/mod.ts";
import { createPushPipeline, type PushPipeline } from "./push/push_pipeline.ts";
import { rejectedByAll } from "./model/config_source.ts";
import { startInjection } from "./inject/mod.ts";
import type { PushContext } from "./push/push_context.ts";
import { AdsServer, xdsSettingsFromEnv } from "./xds/mod.ts";
import { xdsAdmissionFromEnv } from "./xds/xds_admission.ts";
import { wireDebugInterface } from "./wire_debug_interface.ts";
import { createDutyGates } from "./orch/duty_gates.ts";
import { autoRegistrationComponent } from "./wire_auto_registration.ts";
import { wireStatus } from "./wire_status.ts";
import { caPlanFromEnv, readCaFiles, wireCa } from "./wire_ca.ts";
import { wireSources } from "./wire_sources.ts";
import { wireListeners } from "./wire_listeners.ts";
import { loadWebhookTls, webhookComponents } from "./wire_webhook.ts";

/** What the composition root needs from outside: parsed options and the process-wide services. */
export interface DiscoveryDeps {
  /** Owner of the log scopes and sinks. */
  readonly logs: LogManager;
  /** Registry of the program's metrics. */
  readonly metrics: Metrics;
  /** Build information, served with the monitoring routes and by ControlZ. */
  readonly info: BuildInfo;
  /** Monotonic process start, for `startup_duration_seconds`. */
  readonly startedAt: number;
  /** The command line, shown by ControlZ. */
  readonly argv: readonly string[];
}

/** A running discovery server. */
export interface DiscoveryServer {
  /** The HTTP(S) servers it started, in start order. */
  readonly servers: readonly RunningServer[];
  /** Stops every component in reverse start order: the listeners first, then the modules. */
  close(): Promise<void>;
}

/** Wires and starts every module of `mesh-discovery discovery`. The only file that knows them all. */
export async function startDiscovery(
  options: DiscoveryOptions,
  deps: DiscoveryDeps,
): Promise<DiscoveryServer> {
  const { env } = options;
  const log = deps.logs.scope("default");
  const modelLog = deps.logs.scope("model");

  // Every setting, address and named file is checked before anything opens: a bad one stops startup naming
  // its flag or variable, with nothing served in the meantime.
  const caPlan = caPlanFromEnv(options);
  await checkMeshFiles({ meshConfig: options.meshConfigFile, networksConfig: options.networksConfigFile });
  checkPortsFree([
    { flag: "--grpcAddr", addr: options.grpcAddr },
    ...(caPlan.enabled ? [{ flag: "--secureGRPCAddr", addr: options.secureGrpcAddr }] : []),
    { flag: "--httpAddr", addr: options.httpAddr },
    { flag: "--monitoringAddr", addr: options.monitoringAddr },
    { flag: "--ctrlz_address/--ctrlz_port", addr: options.ctrlzAddr },
    { flag: "--httpsAddr", addr: options.httpsAddr },
  ]);

  exportProcessMetrics(deps.metrics);
  // What every listener receives, for the collection after a burst.
  const traffic = new TrafficMeter();
  const httpLimits = { ...httpLimitsFromEnv(env), metrics: deps.metrics, traffic };

  // Certificate files named by --tlsCertFile/--tlsKeyFile are read and checked before any port opens
  // (without them, the certificate comes from the CA later).
  const webhookTls = await loadWebhookTls(options, deps.logs);
  // So are --caCertFile and SPIFFE_BUNDLE_ENDPOINTS.
  const caFiles = await readCaFiles(caPlan, options);

  // Config sources feed one store; the orchestrator, when read, is a registry, config source and secret store.
  const sources = await wireSources({ options, logs: deps.logs, metrics: deps.metrics, log, modelLog });
  const { store, mesh, orch, orchModule, configSources, registries, remoteClusters, secrets } = sources;
  // One gate per singleton duty: elected on the orchestrator's Leases, else this replica leads them alone.
  // Writers that must run on one replica only take theirs from `duties.gates`.
  const duties = createDutyGates({
    ...(orch ? { leases: orch.leases } : {}),
    podName: env.string("POD_NAME"),
    namespace: options.namespace,
    ttlMs: env.durationMs("DISCOVERY_LEADER_ELECTION_TTL"),
    log,
    metrics: deps.metrics,
  });
  const certs = wireCa({
    plan: caPlan,
    files: caFiles,
    options,
    mesh,
    ...(orch ? { orch } : {}),
    ...(orchModule ? { orchModule } : {}),
    logs: deps.logs,
    metrics: deps.metrics,
    log,
  });

  // Status, Ingress status and analysis: one status writer, each field written by its duty's leader.
  const writers = wireStatus({
    env,
    ...(orch ? { orch } : {}),
    duties,
    store,
    mesh,
    namespace: options.namespace,
    domain: options.domain,
    logs: deps.logs,
    log,
  });
  const status = writers.status;
  const xdsSettings = status
    ? { ...xdsSettingsFromEnv(env), distributionTracking: true }
    : xdsSettingsFromEnv(env);
  // 15010 and 15012 share one budget of connections and streams, server-wide and per peer address.
  const xdsAdmission = xdsAdmissionFromEnv(env);
  const adsLog = deps.logs.scope("ads");
  const pushHistory = new PushHistory();

  // Built by their components' start, in list order; each is read only by components listed after it.
  let injection!: Awaited<ReturnType<typeof startInjection>>;
  let pipeline!: PushPipeline;
  let discovery!: AdsServer<PushContext>;
  const xds = () => ({
    service: discovery,
    keepalive: options.keepalive,
    logger: adsLog,
    admission: xdsAdmission,
    traffic,
  });
  const listeners = wireListeners({
    ...deps,
    options,
    env,
    log,
    httpLimits,
    xds,
    debugInterface: () =>
      wireDebugInterface({
        env,
        profile: options.profile,
        store,
        mesh,
        registries,
        pipeline,
        discovery,
        configSources,
        pushHistory,
        ...(remoteClusters ? { remoteClusters: () => remoteClusters.status() } : {}),
        ...(certs.ca() ? { servedRootsPem: certs.servedRootsPem } : {}),
        adminEndpoints: xdsSettings.adminEndpoints,
        ...(writers.analysis &&
          {
            analysis: {
              sink: writers.analysis.sink,
              analyzers: writers.analysis.analyzers.map((a) => a.name),
            },
          }),
        duties: () => duties.status(),
        metrics: deps.metrics,
        log,
      }),
    readiness: () => readiness,
  });

  // Started in this order and stopped in reverse: every listener opens only after every fallible step (the
  // mesh and injector files, the CA's plugged-in files) and /ready waits for the last listener, because an
  // orchestrator calls the webhook as soon as the pod is ready.
  const lifecycle = new Lifecycle([
    nativeHeapTrimming(env.durationMs("DISCOVERY_NATIVE_HEAP_TRIM_INTERVAL"), log),
    ...sources.configComponents(),
    {
      name: "injection",
      // So does an injector config file that exists but is invalid, as in the reference.
      start: async () => {
        injection = await startInjection({
          enabled: env.bool("INJECT_ENABLED"),
          environment: {
            ENABLE_LEGACY_FSGROUP_INJECTION: String(env.bool("ENABLE_LEGACY_FSGROUP_INJECTION")),
          },
          revision: env.string("REVISION"),
          mesh: () => mesh.current(),
          metrics: deps.metrics,
          log,
        });
      },
      stop: () => injection.stop(),
    },
    ...sources.registryComponents(),
    { name: "leader election", start: () => duties.start(), stop: () => duties.stop() },
    closingComponent("push pipeline", () => {
      // Events → debounce → frozen PushContext; a secret or mesh change is a full push.
      pipeline = createPushPipeline({
        ...(secrets ? { secrets } : {}),
        store,
        registry: registries.aggregate,
        mesh: () => mesh.current(),
        networks: () => mesh.networks(),
        unsynced: () => sources.unsynced(),
        domain: options.domain,
        env,
        metrics: deps.metrics,
        log: modelLog,
        plugins: {
          authn: options.plugins.has("authn"),
          authz: options.plugins.has("authz"),
          metadataExchange: options.plugins.has("metadata_exchange"),
        },
      });
      return [
        () => pipeline.close(),
        ...(secrets
          ? [secrets.onChange((namespace, name) => pipeline.changes.secretChanged(namespace, name))]
          : []),
        mesh.onChange(() => {
          registries.serviceEntries.refresh();
          pipeline.changes.meshChanged();
        }),
      ];
    }),
    ...writers.analysisComponent(() => pipeline.stage),
    {
      ...closingComponent("xds", () => {
        // Every snapshot the pipeline publishes is pushed to the connected proxies.
        discovery = new AdsServer<PushContext>({
          generators: registerNameTableGenerators(
            registerEnvoyGenerators(
              registerGrpcGenerators(new GeneratorRegistry<PushContext>()),
              new EnvoyFilterReports(deps.metrics, adsLog),
            ),
          ),
          settings: xdsSettings,
          logger: adsLog,
          metrics: deps.metrics,
          initialPush: pipeline.stage.current(),
          // Like the reference, no stream is served a snapshot of sources still listing their state.
          waiting: () => pipeline.gate.waiting(),
          pushHistory,
        });
        discovery.startReleasingUnheld();
        return [
          () => discovery.close(),
          pipeline.stage.onPush((request, push) => discovery.push(request, push)),
        ];
      }),
      // Ready only when a new stream would be served, not told to come back.
      ready: () => discovery.notReady(),
    },
    collectionAfterBurst({
      minBytes: env.int("DISCOVERY_COLLECT_AFTER_BURST_BYTES"),
      traffic: () => traffic.total,
      busy: () => {
        const queue = discovery.queueStats();
        return !pipeline.debouncer.idle || queue.pending + queue.inFlight > 0;
      },
      collect: exposedFullCollection(),
      collected: () => deps.metrics.counter("discovery_heap_collections").inc(),
      logger: log,
    }),
    autoRegistrationComponent({
      env,
      store,
      ...(orch ? { writer: orch.workloadEntries } : {}),
      cleanup: duties.gates.ingressController,
      instanceId: duties.identity,
      ...(duties.liveness ? { liveness: duties.liveness.reader() } : {}),
      maxConnectionAgeNs: options.keepalive.maxConnectionAgeNs,
      discovery: () => discovery,
      log,
    }),
    ...writers.writerComponents(() => registries.aggregate),
    ...(status ? [status.component(() => ({ tracker: discovery.tracker!, snapshots: pipeline.stage }))] : []),
    ...certs.components(),
    listeners.grpc(),
    ...certs.securePort(xds),
    ...listeners.http(),
    ...webhookComponents({
      options,
      ...(webhookTls ? { tls: webhookTls } : {}),
      certs,
      injection: () => injection.router,
      listener: listeners.listener,
      httpLimits,
      ...(orch ? { orch } : {}),
      ...(orchModule ? { orchModule } : {}),
      duties,
      ...(sources.external && remoteClusters ? { remoteClusters } : {}),
      ready: () => readiness.status().ready,
      logs: deps.logs,
      metrics: deps.metrics,
    }),
  ]);
  const readiness: Readiness = new Readiness(lifecycle.checks(), {
    metrics: deps.metrics,
    startedAt: deps.startedAt,
  });
  await lifecycle.start();

  log.info("discovery server started", {
    registries: options.registries,
    configDir: options.configDir,
    resources: store.size,
    rejected: rejectedByAll(configSources.values()).length,
    ready: readiness.status().ready,
  });
  return { servers: listeners.servers, close: () => lifecycle.stop() };
}
