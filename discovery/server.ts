import { checkPortsFree } from "../shared/http/preflight_ports.ts";
import { Router } from "../shared/http/router.ts";
import { httpLimitsFromEnv } from "../shared/http/http_limits_settings.ts";
import { type RunningServer, serveHttp } from "../shared/http/serve.ts";
import type { LogManager } from "../shared/log/log_manager.ts";
import type { Metrics } from "../shared/metrics/metrics.ts";
import type { BuildInfo } from "../shared/version/build_info.ts";
import { meshConfigToJson } from "../shared/config/mesh/mod.ts";
import type { DiscoveryOptions } from "./cli/discovery_options.ts";
import { configDirSettingsFromEnv, FileConfigSource, MemoryConfigStore, MeshWatcher } from "./config/mod.ts";
import { checkMeshFiles } from "./cli/mesh_files_check.ts";
import { addCtrlzRoutes } from "./ctrlz/ctrlz_routes.ts";
import { addDebugOverview } from "./http/debug_overview_routes.ts";
import { PushHistory } from "./push/push_history.ts";
import { proxyOverview } from "./xds/proxy_overview.ts";
import { DebugInterface } from "./http/debug_interface.ts";
import { InspectorProfiler } from "./http/inspector_profiler.ts";
import { addModelDebugRoutes } from "./http/model_debug_routes.ts";
import { addMonitoringRoutes } from "./http/monitoring_routes.ts";
import { addPprofRoutes } from "./http/pprof_routes.ts";
import { addReadyRoute, Readiness, syncedCheck } from "./http/readiness.ts";
import {
  GeneratorRegistry,
  registerEnvoyGenerators,
  registerGrpcGenerators,
  registerNameTableGenerators,
} from "./generate/mod.ts";
import { createPushPipeline } from "./push/push_pipeline.ts";
import {
  caSettingsFromEnv,
  CertificateAuthorityServer,
  FederatedBundles,
  parseBundleEndpoints,
  readCaCertFile,
  securePortNames,
  xdsCallerCheck,
} from "./ca/mod.ts";
import { buildRegistries } from "./registry/build_registries.ts";
import { DirSecretStore } from "./model/dir_secret_store.ts";
import { mergeSecretStores } from "./model/merged_secret_store.ts";
import { loadServingTls, startWebhookServer, webhookServingNames } from "./webhook/mod.ts";
import { startInjection } from "./inject/mod.ts";
import type { PushContext } from "./push/push_context.ts";
import { addXdsDebugRoutes, AdsServer, startXdsServer, xdsSettingsFromEnv } from "./xds/mod.ts";
import { xdsAdmissionFromEnv } from "./xds/xds_admission.ts";

/** Lifetime of the secure port's serving certificate (cut at the CA's own expiry). */
const SECURE_PORT_CERT_TTL_MS = 365 * 24 * 3600 * 1000;

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
  /** Shuts every server down, then stops the modules in reverse start order. */
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
  const servers: RunningServer[] = [];
  const closers: Array<() => void | Promise<void>> = [];

  // Every setting, address and named file is checked before anything opens: a bad one stops startup naming
  // its flag or variable, with nothing served in the meantime.
  const caEnabled = env.bool("ENABLE_CA_SERVER");
  const caSettings = caEnabled ? caSettingsFromEnv(env) : undefined;
  const names = securePortNames(options.namespace, options.domain, env.string("MESHD_CUSTOM_HOST"));
  await checkMeshFiles({ meshConfig: options.meshConfigFile, networksConfig: options.networksConfigFile });
  checkPortsFree([
    { flag: "--grpcAddr", addr: options.grpcAddr },
    ...(caEnabled ? [{ flag: "--secureGRPCAddr", addr: options.secureGrpcAddr }] : []),
    { flag: "--httpAddr", addr: options.httpAddr },
    { flag: "--monitoringAddr", addr: options.monitoringAddr },
    { flag: "--ctrlz_address/--ctrlz_port", addr: options.ctrlzAddr },
    { flag: "--httpsAddr", addr: options.httpsAddr },
  ]);

  const httpLimits = { ...httpLimitsFromEnv(env), metrics: deps.metrics };

  // Certificate files named by --tlsCertFile/--tlsKeyFile are read and checked before any port opens
  // (without them, the certificate comes from the CA later).
  const webhookTls = options.tlsCertFile || options.tlsKeyFile
    ? await loadServingTls({
      tlsCertFile: options.tlsCertFile,
      tlsKeyFile: options.tlsKeyFile,
      servingNames: webhookServingNames(options.namespace),
      log: deps.logs.scope("validationServer"),
    })
    : undefined;
  // So are --caCertFile and SPIFFE_BUNDLE_ENDPOINTS.
  const caCertPem = options.caCertFile ? await readCaCertFile(options.caCertFile) : "";
  const bundleEndpoints = parseBundleEndpoints(env.string("SPIFFE_BUNDLE_ENDPOINTS"));

  // Config sources feed one store; the mesh config comes from its own files.
  const store = new MemoryConfigStore({ logger: modelLog });
  // The orchestrator, when a registry reads it, is also a config source (the mesh kinds as custom resources).
  // Loaded only when configured: the orchestrator client is the largest library of the program (some 30 MiB of
  // source, code and objects), which a server of files and other registries never uses.
  const orchModule = options.registries.includes("Orchestrator") ? await import("./orch/mod.ts") : undefined;
  const orchLimiter = orchModule && new orchModule.RateLimiter(options.orchApiQps, options.orchApiBurst);
  const orchClient = orchModule && orchLimiter
    ? {
      kubeConfig: orchModule.limitWatches(
        orchModule.loadOrchConfig({
          orchConfig: options.orchConfig,
          serviceHost: env.string("ORCH_SERVICE_HOST"),
        }),
        orchLimiter,
      ),
      limiter: orchLimiter,
    }
    : undefined;
  const files = options.configDir === "" ? undefined : new FileConfigSource({
    dir: options.configDir,
    store,
    defaultNamespace: "default",
    logger: deps.logs.scope("source"),
    metrics: deps.metrics,
    ...configDirSettingsFromEnv(env),
  });
  await files?.start();
  if (files) closers.push(() => files.stop());
  const orchConfig = orchModule && orchClient && new orchModule.OrchConfigSource({
    ...orchClient,
    store,
    log: deps.logs.scope("source"),
    metrics: deps.metrics,
    marksStoreSynced: files === undefined,
  });
  orchConfig?.start();
  if (orchConfig) closers.push(() => orchConfig.stop());
  const mesh = new MeshWatcher({
    meshConfigFile: options.meshConfigFile,
    networksFile: options.networksConfigFile,
    logger: log,
    metrics: deps.metrics,
  });
  // A mesh config file that exists but is invalid stops startup: serving the defaults instead would silently
  // change the whole mesh's behaviour.
  await mesh.start({ requireValid: true });
  closers.push(() => mesh.stop());
  // So does an injector config file that exists but is invalid, as in the reference.
  const injection = await startInjection({
    enabled: env.bool("INJECT_ENABLED"),
    environment: { ENABLE_LEGACY_FSGROUP_INJECTION: String(env.bool("ENABLE_LEGACY_FSGROUP_INJECTION")) },
    revision: env.string("REVISION"),
    mesh: () => mesh.current(),
    metrics: deps.metrics,
    log,
  });
  closers.push(() => injection.stop());

  // Registries and the push pipeline: events → debounce → frozen PushContext.
  const orch = orchModule && orchClient
    ? new orchModule.OrchRegistry({
      ...orchClient,
      log: deps.logs.scope("orch"),
      metrics: deps.metrics,
      domain: options.domain,
      clusterId: options.clusterId,
      get defaultExportTo() {
        return mesh.current().defaultServiceExportTo;
      },
      edsForHeadless: env.bool("DISCOVERY_ENABLE_EDS_FOR_HEADLESS_SERVICES"),
      useEndpointSlices: env.bool("DISCOVERY_USE_ENDPOINT_SLICE"),
      resyncMs: options.resyncMs,
    })
    : undefined;
  const registries = buildRegistries({
    ...(orch && env.bool("DISCOVERY_ENABLE_SERVICEENTRY_SELECT_PODS") ? { pods: orch.pods } : {}),
    ...(orch ? { factories: { Orchestrator: () => orch.serviceRegistry } } : {}),
    registries: options.registries,
    clusterId: options.clusterId,
    appNamespaces: options.appNamespaces,
    defaultServiceExportTo: () => mesh.current().defaultServiceExportTo,
    store,
    log: modelLog,
  });
  registries.serviceEntries.start();
  closers.push(() => registries.serviceEntries.stop());
  if (orch && env.bool("DISCOVERY_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES")) {
    orch.selectWorkloadEntries(registries.serviceEntries.workloadEntries);
  }
  orch?.start();
  if (orch) closers.push(() => orch.stop());
  // Gateway credentials: the orchestrator's Secrets when it is read, then MESHD_GATEWAY_CREDENTIALS_DIR.
  // MESHD_ENABLE_SDS_SERVER=false: gateways get their credentials from their own agent, not from here.
  const sdsServer = env.bool("MESHD_ENABLE_SDS_SERVER");
  const orchSecrets = orchModule && orchClient && sdsServer
    ? new orchModule.OrchSecretStore({
      ...orchClient,
      log: deps.logs.scope("secretcontroller"),
      onProblem: () => deps.metrics.counter("discovery_gateway_credential_errors").inc(),
    })
    : undefined;
  orchSecrets?.start();
  if (orchSecrets) closers.push(() => orchSecrets.stop());
  const credentialsDir = env.string("MESHD_GATEWAY_CREDENTIALS_DIR");
  const dirSecrets = credentialsDir !== "" && sdsServer
    ? new DirSecretStore({
      dir: credentialsDir,
      log: deps.logs.scope("secretcontroller"),
      onProblem: () => deps.metrics.counter("discovery_gateway_credential_errors").inc(),
    })
    : undefined;
  await dirSecrets?.start();
  if (dirSecrets) closers.push(() => dirSecrets.stop());
  const secrets = mergeSecretStores([orchSecrets, dirSecrets]);
  const pipeline = createPushPipeline({
    ...(secrets ? { secrets } : {}),
    store,
    registry: registries.aggregate,
    mesh: () => mesh.current(),
    domain: options.domain,
    env,
    metrics: deps.metrics,
    log: modelLog,
  });
  closers.push(() => pipeline.close());
  if (secrets) {
    closers.push(secrets.onChange((namespace, name) => pipeline.changes.secretChanged(namespace, name)));
  }
  closers.push(mesh.onChange(() => {
    registries.serviceEntries.refresh();
    pipeline.changes.meshChanged();
  }));

  // xDS: every snapshot the pipeline publishes is pushed to the connected proxies.
  const xdsSettings = xdsSettingsFromEnv(env);
  // 15010 and 15012 share one budget of connections and streams, server-wide and per peer address.
  const xdsAdmission = xdsAdmissionFromEnv(env);
  const adsLog = deps.logs.scope("ads");
  const generators = registerNameTableGenerators(
    registerEnvoyGenerators(registerGrpcGenerators(new GeneratorRegistry<PushContext>())),
  );
  const pushHistory = new PushHistory();
  const discovery = new AdsServer<PushContext>({
    generators,
    settings: xdsSettings,
    logger: adsLog,
    metrics: deps.metrics,
    initialPush: pipeline.stage.current(),
    pushHistory,
  });
  closers.push(() => discovery.close());
  closers.push(pipeline.stage.onPush((request, push) => discovery.push(request, push)));
  // The CA, and the secure port serving ADS and the CA over TLS with a certificate the CA issued.
  const trustDomain = options.trustDomain || mesh.current().trustDomain;
  const federation = caEnabled && bundleEndpoints.length > 0
    ? new FederatedBundles({ endpoints: bundleEndpoints, log: deps.logs.scope("serverca") })
    : undefined;
  await federation?.start();
  if (federation) closers.push(() => federation.stop());
  const ca = caSettings
    ? await CertificateAuthorityServer.create({ ...caSettings, trustDomain }, {
      log: deps.logs.scope("serverca"),
      metrics: deps.metrics,
      ...(federation && { federation }),
    })
    : undefined;
  // Roots that verify the discovery server, and those trusted for client certificates on the secure port.
  const servedRootsPem = () => (ca?.rootsPem() ?? "") + caCertPem;
  const clientRootsPem = () => servedRootsPem() + (federation?.rootsPem() ?? "");
  const issueServingCert = ca && (async (dnsNames: readonly string[]) => {
    const issued = await ca.servingCertificate(dnsNames, SECURE_PORT_CERT_TTL_MS);
    return { cert: issued.certChainPem, key: issued.keyPem, caPem: issued.caPem };
  });
  // Listeners open only now, after every fallible step above (the CA's plugged-in files among them).
  const ads = await startXdsServer({
    addr: options.grpcAddr,
    service: discovery,
    keepalive: options.keepalive,
    logger: adsLog,
    admission: xdsAdmission,
  });
  closers.push(() => ads.close());
  if (ca && issueServingCert) {
    ca.startRotation();
    closers.push(() => ca.close());
    // --tlsCertFile/--tlsKeyFile when given, else a certificate this CA issues for the discovery service's names.
    let serving = await loadServingTls({
      tlsCertFile: options.tlsCertFile,
      tlsKeyFile: options.tlsKeyFile,
      servingNames: names,
      issue: issueServingCert,
      log: deps.logs.scope("serverca"),
    });
    const secure = await startXdsServer({
      addr: options.secureGrpcAddr,
      flag: "--secureGRPCAddr",
      service: discovery,
      keepalive: options.keepalive,
      logger: adsLog,
      admission: xdsAdmission,
      tls: { keyPem: serving.key, certChainPem: serving.cert, caPem: clientRootsPem() },
      services: ca.services(),
      ...(env.bool("XDS_AUTH")
        ? {
          authenticate: xdsCallerCheck({
            authenticators: ca.authenticators(),
            identityCheck: env.bool("DISCOVERY_ENABLE_XDS_IDENTITY_CHECK"),
            trustDomains: [trustDomain, ...mesh.current().trustDomainAliases],
            federatedTrustDomains: () => federation?.trustDomains() ?? [],
            skipTrustDomain: env.bool("DISCOVERY_SKIP_VALIDATE_TRUST_DOMAIN"),
          }),
        }
        : {}),
    });
    closers.push(() => secure.close());
    const retrust = () =>
      secure.updateTls({ keyPem: serving.key, certChainPem: serving.cert, caPem: clientRootsPem() });
    // After a root rotation new connections must trust both roots, and a serving certificate the CA issued is
    // re-issued by the new signer so that workloads which know only the new root can verify the server.
    ca.onRootsChanged(async () => {
      if (!options.tlsCertFile) serving = { ...await issueServingCert(names), source: "mesh CA" };
      retrust();
    });
    federation?.onChange(retrust);
  }

  // HTTP: readiness and the debug interface (8080), monitoring (15014), ControlZ, webhooks (15017).
  const debug = new DebugInterface({ allowRemote: env.bool("DEBUG_REMOTE_ACCESS") });
  const rejectedConfig = () => [...(files?.rejected() ?? []), ...(orchConfig?.rejected() ?? [])];
  addModelDebugRoutes(debug, {
    store,
    registry: registries.aggregate,
    endpoints: pipeline.endpoints,
    push: () => pipeline.stage.current(),
    rejected: rejectedConfig,
    sourceStatus: () => ({ ...(files && { configDir: files.status() }), meshFiles: mesh.status() }),
    proxies: () => discovery.connections().map((c) => c.proxy),
    // Durations print in Go's form (`10s`) rather than as nanosecond integers.
    mesh: () =>
      JSON.parse(
        meshConfigToJson({ meshConfig: mesh.current(), meshNetworks: mesh.networks(), files: mesh.status() }),
      ),
    env,
  });
  addXdsDebugRoutes(debug.router, discovery, { adminEndpoints: xdsSettings.adminEndpoints });
  addDebugOverview(debug, {
    proxies: () => proxyOverview(discovery),
    latestPush: () => discovery.pushContext?.version,
    store,
    rejected: rejectedConfig,
    pushes: pushHistory,
  });
  if (ca) {
    debug.add(
      "/debug/ca_roots",
      "Roots that verify the discovery server (PEM): the CA's, the current one first, then --caCertFile's",
      () => new Response(servedRootsPem(), { headers: { "content-type": "application/x-pem-file" } }),
    );
  }
  if (options.profile) addPprofRoutes(debug, new InspectorProfiler());
  // An orchestrator calls the webhook as soon as the pod is ready: ready waits for the last listener.
  let listening = false;
  const readiness = new Readiness([
    syncedCheck("listeners", () => listening, () => "not every listener is open yet"),
    syncedCheck("config", () => store.synced, () => "config sources have not loaded yet"),
    syncedCheck(
      "orchestrator config",
      () => orchConfig?.synced ?? true,
      () => "the orchestrator's custom resources have not been listed yet",
    ),
    syncedCheck(
      "meshFiles",
      () => mesh.status().every((f) => !f.lost),
      () =>
        `mesh config file gone: ${
          mesh.status().filter((f) => f.lost).map((f) => f.file).join(", ")
        }; serving the config last loaded from it`,
    ),
    syncedCheck(
      "configDir",
      () => files === undefined || files.status().state === "watching",
      () => `config directory ${options.configDir} (--configDir) is gone; serving its last loaded config`,
    ),
    syncedCheck(
      "registries",
      () => registries.aggregate.hasSynced(),
      () => `registries not synced: ${registries.aggregate.unsyncedRegistries().join(", ")}`,
    ),
  ], { metrics: deps.metrics, startedAt: deps.startedAt });
  const http = addReadyRoute(new Router(), readiness);
  if (env.bool("ENABLE_DEBUG_ON_HTTP")) debug.mount(http);
  servers.push(
    await serveHttp("http", options.httpAddr, http.handle, log, undefined, "--httpAddr", httpLimits),
  );
  const monitoring = debug.mount(addMonitoringRoutes(new Router(), deps.metrics, deps.info));
  servers.push(
    await serveHttp(
      "monitoring",
      options.monitoringAddr,
      monitoring.handle,
      log,
      undefined,
      "--monitoringAddr",
      httpLimits,
    ),
  );
  const ctrlz = addCtrlzRoutes(new Router(), {
    logs: deps.logs,
    env,
    info: deps.info,
    args: deps.argv,
    startedAt: new Date(Date.now() - (performance.now() - deps.startedAt)),
    allowRemote: env.bool("DEBUG_REMOTE_ACCESS"),
    metrics: () => deps.metrics.render(),
  });
  servers.push(
    await serveHttp(
      "ControlZ",
      options.ctrlzAddr,
      ctrlz.handle,
      log,
      undefined,
      "--ctrlz_address/--ctrlz_port",
      httpLimits,
    ),
  );
  const webhook = await startWebhookServer({
    router: injection.router,
    addr: options.httpsAddr,
    tlsCertFile: options.tlsCertFile,
    tlsKeyFile: options.tlsKeyFile,
    servingNames: webhookServingNames(options.namespace),
    ...(webhookTls ? { tls: webhookTls } : {}),
    ...(issueServingCert ? { issue: issueServingCert } : {}),
    validationEnabled: env.bool("VALIDATION_ENABLED"),
    limits: httpLimits,
    metrics: deps.metrics,
    log: deps.logs.scope("validationServer"),
  });
  servers.push(webhook.server);
  listening = true;

  const ready = readiness.status();
  log.info("discovery server started", {
    registries: options.registries,
    configDir: options.configDir,
    resources: store.size,
    rejected: (files?.rejected().length ?? 0) + (orchConfig?.rejected().length ?? 0),
    ready: ready.ready,
  });
  return {
    servers,
    async close() {
      await Promise.all(servers.map((s) => s.shutdown()));
      for (const close of closers.reverse()) await close();
    },
  };
}
