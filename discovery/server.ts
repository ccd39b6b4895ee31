import { checkPortsFree } from "@mesh/shared/http/preflight_ports";
import { Router } from "@mesh/shared/http/router";
import { httpLimitsFromEnv } from "@mesh/shared/http/http_limits_settings";
import { type RunningServer, serveHttp } from "@mesh/shared/http/serve";
import type { ListenAddress } from "@mesh/shared/http/listen_address";
import { closingComponent, type Component, Lifecycle } from "@mesh/shared/lifecycle";
import type { LogManager } from "@mesh/shared/log/log_manager";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { nativeHeapTrimming } from "@mesh/shared/process/native_heap_trimmer";
import type { BuildInfo } from "@mesh/shared/version/build_info";
import type { DiscoveryOptions } from "./cli/discovery_options.ts";
import { configDirSettingsFromEnv, FileConfigSource, MemoryConfigStore, MeshWatcher } from "./config/mod.ts";
import { checkMeshFiles } from "./cli/mesh_files_check.ts";
import { addCtrlzRoutes } from "./ctrlz/ctrlz_routes.ts";
import { PushHistory } from "./push/push_history.ts";
import type { DebugInterface } from "./http/debug_interface.ts";
import { addMonitoringRoutes } from "./http/monitoring_routes.ts";
import { addReadyRoute, Readiness } from "./http/readiness.ts";
import {
  EnvoyFilterReports,
  GeneratorRegistry,
  registerEnvoyGenerators,
  registerGrpcGenerators,
  registerNameTableGenerators,
} from "./generate/mod.ts";
import { createPushPipeline, type PushPipeline } from "./push/push_pipeline.ts";
import {
  caSettingsFromEnv,
  CertificateAuthority,
  EXTERNAL_CA_ORCH,
  externalCaFromEnv,
  FederatedBundles,
  parseBundleEndpoints,
  readCaCertFile,
  securePortNames,
} from "./ca/mod.ts";
import { buildRegistries } from "./registry/build_registries.ts";
import { type ConfigSource, rejectedByAll } from "./model/config_source.ts";
import { DirSecretStore } from "./model/dir_secret_store.ts";
import { mergeSecretStores } from "./model/merged_secret_store.ts";
import {
  loadServingTls,
  startWebhookServer,
  type WebhookServer,
  webhookServingNames,
} from "./webhook/mod.ts";
import {
  ORCH_CA_FILE,
  ORCH_CERT_PROVIDERS,
  ORCH_SERVING_SIGNER,
  orchServingCertIssuer,
} from "./orch/orch_serving_cert.ts";
import { startInjection } from "./inject/mod.ts";
import type { PushContext } from "./push/push_context.ts";
import { AdsServer, startXdsServer, xdsSettingsFromEnv } from "./xds/mod.ts";
import { xdsAdmissionFromEnv } from "./xds/xds_admission.ts";
import { wireDebugInterface } from "./wire_debug_interface.ts";
import { secureXdsPort } from "./secure_xds_port.ts";
import { createDutyGates } from "./orch/duty_gates.ts";
import { autoRegistrationComponent } from "./wire_auto_registration.ts";
import { wireStatus } from "./wire_status.ts";

/** Where the external CA's root is read from when `--caCertFile` is not given, as the reference's. */
const EXTERNAL_CA_ROOT_FILE = "./etc/external-ca-cert/root-cert.pem";

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
  const caEnabled = env.bool("ENABLE_CA_SERVER");
  const caSettings = caEnabled ? caSettingsFromEnv(env) : undefined;
  const externalCa = caEnabled ? externalCaFromEnv(env) : undefined;
  if (externalCa && !options.registries.includes("Orchestrator")) {
    throw new RangeError(
      `EXTERNAL_CA=${EXTERNAL_CA_ORCH} needs the orchestrator's API: add Orchestrator to --registries`,
    );
  }
  // DISCOVERY_CERT_PROVIDER=orchestrator: the orchestrator's CA signs this server's certificate.
  const orchSigned = caEnabled && ORCH_CERT_PROVIDERS.includes(env.string("DISCOVERY_CERT_PROVIDER"));
  if (orchSigned && !options.registries.includes("Orchestrator")) {
    throw new RangeError(
      `DISCOVERY_CERT_PROVIDER=${env.string("DISCOVERY_CERT_PROVIDER")} needs the orchestrator's API: ` +
        "add Orchestrator to --registries",
    );
  }
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
  // The external CA's root, as the reference finds it: --caCertFile, else the mounted external CA bundle.
  const externalRootPem = !externalCa
    ? ""
    : caCertPem || await readCaCertFile(EXTERNAL_CA_ROOT_FILE, `the external CA's root (--caCertFile unset)`);
  const orchCaPem = orchSigned
    ? await readCaCertFile(ORCH_CA_FILE, "the orchestrator's CA (DISCOVERY_CERT_PROVIDER)")
    : "";
  const bundleEndpoints = parseBundleEndpoints(env.string("SPIFFE_BUNDLE_ENDPOINTS"));

  // Config sources feed one store; the mesh config comes from its own files.
  const store = new MemoryConfigStore({ logger: modelLog });
  const mesh = new MeshWatcher({
    meshConfigFile: options.meshConfigFile,
    networksFile: options.networksConfigFile,
    logger: log,
    metrics: deps.metrics,
  });
  const files = options.configDir === "" ? undefined : new FileConfigSource({
    dir: options.configDir,
    store,
    defaultNamespace: "default",
    logger: deps.logs.scope("source"),
    metrics: deps.metrics,
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
      logs: deps.logs,
      metrics: deps.metrics,
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
      log: deps.logs.scope("secretcontroller"),
      onProblem: () => deps.metrics.counter("discovery_gateway_credential_errors").inc(),
    })
    : undefined;
  const secrets = mergeSecretStores([orch?.secrets, dirSecrets]);
  const trustDomain = () => options.trustDomain || mesh.current().trustDomain;
  const federation = caEnabled && bundleEndpoints.length > 0
    ? new FederatedBundles({ endpoints: bundleEndpoints, log: deps.logs.scope("serverca") })
    : undefined;

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

  // USE_REMOTE_CERTS: the plugged-in CA from the `cacerts` Secret of the cluster read, when it exists there.
  const remoteCaCerts = async () => {
    if (!env.bool("USE_REMOTE_CERTS")) return undefined;
    if (!orch) {
      log.warn(
        "USE_REMOTE_CERTS is on but no orchestrator is read: the CA's certificates come from ROOT_CA_DIR",
      );
      return undefined;
    }
    const { CA_CERTS_TIMEOUT_MS, readCaCertsSecret } = await import("./orch/ca_certs_secret.ts");
    const found = await readCaCertsSecret(orch.http(CA_CERTS_TIMEOUT_MS), options.namespace);
    log.info(found ? "CA certificates found in the orchestrator" : "no CA certificates in the orchestrator", {
      secret: `${options.namespace}/cacerts`,
    });
    return found;
  };

  // Built by their components' start, in list order; each is read only by components listed after it.
  let injection!: Awaited<ReturnType<typeof startInjection>>;
  let pipeline!: PushPipeline;
  let discovery!: AdsServer<PushContext>;
  let ca: CertificateAuthority | undefined;
  let webhook: WebhookServer | undefined;
  const servedRootsPem = () => (ca?.rootsPem() ?? "") + (externalRootPem || caCertPem);
  // Roots trusted for client certificates on the secure port.
  const clientRootsPem = () => servedRootsPem() + (federation?.rootsPem() ?? "");
  const issueServingCert = orchSigned
    ? (dnsNames: readonly string[]) =>
      orchServingCertIssuer(
        orch!.csrSigner({ signerName: ORCH_SERVING_SIGNER, rootsPem: orchCaPem, log }),
        orchCaPem,
        SECURE_PORT_CERT_TTL_MS,
      )(dnsNames)
    : caEnabled
    ? async (dnsNames: readonly string[]) => {
      const issued = await ca!.servingCertificate(dnsNames, SECURE_PORT_CERT_TTL_MS);
      return { cert: issued.certChainPem, key: issued.keyPem, caPem: issued.caPem };
    }
    : undefined;
  const servers: RunningServer[] = [];
  const listener = (name: string, open: () => Promise<RunningServer>): Component =>
    closingComponent(name, async () => {
      const server = await open();
      servers.push(server);
      return [() => server.shutdown()];
    });
  // An HTTP listener serving `router()`, built when it starts (the modules it reads have started by then).
  const httpListener = (name: string, addr: ListenAddress, flag: string, router: () => Router) =>
    listener(name, () => serveHttp(name, addr, router().handle, log, undefined, flag, httpLimits));
  let debug: DebugInterface | undefined;

  // Started in this order and stopped in reverse: every listener opens only after every fallible step (the
  // mesh and injector files, the CA's plugged-in files) and /ready waits for the last listener, because an
  // orchestrator calls the webhook as soon as the pod is ready.
  const lifecycle = new Lifecycle([
    nativeHeapTrimming(env.durationMs("DISCOVERY_NATIVE_HEAP_TRIM_INTERVAL"), log),
    {
      name: "config",
      start() {},
      stop() {},
      ready: () => store.synced ? undefined : "config sources have not loaded yet",
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
        ready: () =>
          orch.config.synced ? undefined : "the orchestrator's custom resources have not been listed yet",
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
    {
      name: "registries",
      start: () => registries.serviceEntries.start(),
      stop: () => registries.serviceEntries.stop(),
      ready: () =>
        registries.aggregate.hasSynced()
          ? undefined
          : `registries not synced: ${registries.aggregate.unsyncedRegistries().join(", ")}`,
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
        ready: () =>
          orch.ingress.synced ? undefined : "the orchestrator's Ingresses have not been listed yet",
      }]
      : []),
    ...(remoteClusters
      ? [{ name: "remote clusters", start: () => remoteClusters.start(), stop: () => remoteClusters.stop() }]
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
    { name: "leader election", start: () => duties.start(), stop: () => duties.stop() },
    closingComponent("push pipeline", () => {
      // Events → debounce → frozen PushContext; a secret or mesh change is a full push.
      pipeline = createPushPipeline({
        ...(secrets ? { secrets } : {}),
        store,
        registry: registries.aggregate,
        mesh: () => mesh.current(),
        networks: () => mesh.networks(),
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
    closingComponent("xds", () => {
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
        pushHistory,
      });
      return [
        () => discovery.close(),
        pipeline.stage.onPush((request, push) => discovery.push(request, push)),
      ];
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
    ...(federation
      ? [{ name: "federation", start: () => federation.start(), stop: () => federation.stop() }]
      : []),
    ...(caSettings
      ? [{
        name: "ca",
        start: async () => {
          const plugged = await remoteCaCerts();
          ca = await CertificateAuthority.create({ ...caSettings, trustDomain: trustDomain() }, {
            ...(plugged && { plugged }),
            log: deps.logs.scope("serverca"),
            metrics: deps.metrics,
            ...(federation && { federation }),
            ...(externalCa && orch && {
              externalSigner: orch.csrSigner({
                signerName: externalCa.signerName,
                rootsPem: externalRootPem,
                log: deps.logs.scope("serverca"),
              }),
            }),
            ...(orch && orchModule && { reviewToken: orchModule.orchTokenReviewer(orch.client) }),
          });
          ca.startRotation();
        },
        stop: () => ca?.close(),
      }]
      : []),
    closingComponent("grpc", async () => {
      const ads = await startXdsServer({
        addr: options.grpcAddr,
        service: discovery,
        keepalive: options.keepalive,
        logger: adsLog,
        admission: xdsAdmission,
      });
      return [() => ads.close()];
    }),
    ...(caSettings
      ? [secureXdsPort({
        env,
        tlsCertFile: options.tlsCertFile,
        tlsKeyFile: options.tlsKeyFile,
        servingNames: names,
        ca: () => ca!,
        issue: issueServingCert!,
        clientRootsPem,
        ...(federation ? { federation } : {}),
        trustDomains: () => [trustDomain(), ...mesh.current().trustDomainAliases],
        xds: () => ({
          service: discovery,
          keepalive: options.keepalive,
          logger: adsLog,
          admission: xdsAdmission,
        }),
        addr: options.secureGrpcAddr,
        log: deps.logs.scope("serverca"),
      })]
      : []),
    httpListener("http", options.httpAddr, "--httpAddr", () => {
      debug = wireDebugInterface({
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
        ...(ca ? { servedRootsPem } : {}),
        adminEndpoints: xdsSettings.adminEndpoints,
        ...(writers.analysis &&
          {
            analysis: {
              sink: writers.analysis.sink,
              analyzers: writers.analysis.analyzers.map((a) => a.name),
            },
          }),
        duties: () => duties.status(),
      });
      const http = addReadyRoute(new Router(), readiness);
      return env.bool("ENABLE_DEBUG_ON_HTTP") ? debug.mount(http) : http;
    }),
    httpListener(
      "monitoring",
      options.monitoringAddr,
      "--monitoringAddr",
      () => debug!.mount(addMonitoringRoutes(new Router(), deps.metrics, deps.info)),
    ),
    httpListener(
      "ControlZ",
      options.ctrlzAddr,
      "--ctrlz_address/--ctrlz_port",
      () =>
        addCtrlzRoutes(new Router(), {
          logs: deps.logs,
          env,
          info: deps.info,
          args: deps.argv,
          startedAt: new Date(Date.now() - (performance.now() - deps.startedAt)),
          allowRemote: env.bool("DEBUG_REMOTE_ACCESS"),
          metrics: () => deps.metrics.render(),
        }),
    ),
    listener("webhook", async () =>
      (webhook = await startWebhookServer({
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
      })).server),
    // Writers to the orchestrator, last: they point it at listeners that answer; each writes while it leads.
    ...(orch
      ? [orchModule!.orchWriters({
        client: orch.client,
        injectionConfigName: env.bool("INJECT_ENABLED") ? env.string("INJECTION_WEBHOOK_CONFIG_NAME") : "",
        validationConfigName: env.bool("VALIDATION_ENABLED")
          ? env.string("VALIDATION_WEBHOOK_CONFIG_NAME")
          : "",
        namespace: options.namespace,
        // --tlsCertFile's signer is --caCertFile; an issued certificate's roots are the CA's, which keep a
        // rotated root trusted while certificates it signed are in use; else the self-signed root.
        webhookRootsPem: () =>
          options.tlsCertFile
            ? caCertPem
            : orchSigned
            ? orchCaPem
            : ca?.rootsPem() ?? webhook?.tls.caPem ?? "",
        // The root certificate ConfigMaps carry the mesh CA's roots, which an orchestrator-signed server does
        // not hand out (the reference's fetchCARoot); workloads then trust the orchestrator's CA.
        ...(caSettings && !orchSigned
          ? {
            caRootsPem: () => ca?.rootsPem() ?? "",
            onRootsChanged: (l: () => void) => ca!.onRootsChanged(l),
          }
          : {}),
        ready: (): boolean => readiness.status().ready,
        gates: {
          validation: duties.gates.validationController,
          namespaces: duties.gates.namespaceController,
        },
        log: { validation: deps.logs.scope("validationController"), namespaces: deps.logs.scope("orch") },
        metrics: deps.metrics,
        ...(external && remoteClusters ? { remoteClusters } : {}),
      })]
      : []),
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
  return { servers, close: () => lifecycle.stop() };
}
