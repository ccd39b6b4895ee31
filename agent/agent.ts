/**
 * The composition root of `mesh-agent proxy`: the node and bootstrap, the workload certificate, SDS and the xDS
 * proxy on Unix sockets, the status port, and the supervised proxy. The only agent file that wires everything.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { EnvSettings } from "@mesh/shared/env/env_settings";
import type { LogManager } from "@mesh/shared/log/log_manager";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { exportProcessMetrics } from "@mesh/shared/metrics/process_metrics";
import { defaultBootstrap, mergeOverride, parseOverride, validateBootstrap } from "./proxy/bootstrap.ts";
import { PROXY_CONFIG_ANNOTATION, type ProxyConfig, resolveProxyConfig } from "./proxy/proxy_config.ts";
import {
  type BootstrapTelemetry,
  bootstrapTelemetry,
  unsupportedTracer,
} from "./proxy/bootstrap_telemetry.ts";
import type { JsonObject } from "@mesh/proto/struct_json";
import { buildProxyNode, type ProxyRole } from "./proxy/proxy_node.ts";
import { readDownwardApiFile } from "./proxy/downward_api.ts";
import { ProxyBinaryError, ProxySupervisor } from "./proxy/proxy_supervisor.ts";
import { startSdsServer } from "./proxy/sds_server.ts";
import { CredentialDirectory } from "@mesh/shared/credentials/credential_dir";
import { mirrorSecretFiles } from "./proxy/secret_files.ts";
import { XdsSnapshotWriter } from "./proxy/xds_snapshot.ts";
import { startStatusServer } from "./proxy/status_server.ts";
import { parseAppProbes } from "./proxy/app_probe_config.ts";
import { bootstrapTemplateData, renderBootstrapTemplate } from "./proxy/bootstrap_template.ts";
import { parseMetricsAnnotations } from "./proxy/metrics_annotations.ts";
import type { SecretProvider } from "./proxy/workload_secrets.ts";
import { readIfExists } from "./proxy/read_if_exists.ts";
import { caRootPath, rootSettings, xdsRootPath } from "./proxy/cert_provider_roots.ts";
import {
  checkedCaChoice,
  discoveryServerName,
  startWorkloadSecrets,
  WORKLOAD_PATHS,
} from "./proxy/workload_secret_source.ts";
import { startXdsProxy } from "./proxy/xds_proxy.ts";
import type { DnsProxy } from "./dns/dns_proxy.ts";
import { startDnsProxy } from "./dns/start_dns_proxy.ts";
import { closingComponent, Lifecycle } from "@mesh/shared/lifecycle";
import { tokenManagerPlugin } from "./sts/token_manager_plugins.ts";
import { startStsServer } from "./sts/sts_server.ts";

/** What `mesh-agent proxy` is started with. */
export interface ProxyAgentInputs {
  readonly role: ProxyRole;
  readonly env: EnvSettings;
  /** `--meshConfig` (may be absent on disk). */
  readonly meshConfigFile: string;
  /** `--domain`; empty for `<POD_NAMESPACE>.svc.cluster.local`. */
  readonly domain: string;
  /** `--serviceCluster`. */
  readonly serviceCluster: string;
  /** `--templateFile`: a Go template of the bootstrap; empty for ours. */
  readonly templateFile: string;
  /** `--proxyLogLevel`. */
  readonly proxyLogLevel: string;
  /** `--proxyComponentLogLevel`. */
  readonly proxyComponentLogLevel: string;
  /** `--concurrency`; 0 for the proxy's default. */
  readonly concurrency: number;
  /** `--outlierLogPath`; empty: no outlier-detection event log. */
  readonly outlierLogPath: string;
  /** `--stsPort`; 0: no STS server. */
  readonly stsPort?: number;
  /** `--tokenManagerPlugin`: who issues the STS server's tokens. */
  readonly tokenManagerPlugin?: string;
  readonly version: string;
  readonly logs: LogManager;
  /** The agent's metrics registry. */
  readonly metrics: Metrics;
}

/** A running agent. */
export interface ProxyAgent {
  /** Drains the proxy, then stops every server and the workload certificate, in reverse start order. */
  stop(): Promise<void>;
  /** Resolves when something asked the agent to quit (`/quitquitquit`). */
  readonly quitRequested: Promise<string>;
  /** Resolves when the agent cannot go on (the proxy keeps dying): the agent should stop and fail. */
  readonly failed: Promise<Error>;
}

/** How often `GATEWAY_CREDENTIALS_DIR` is read again. */
const CREDENTIALS_CHECK_MS = 2_000;

/** Starts everything; resolves once the servers listen and the proxy was started. */
export async function startProxyAgent(inputs: ProxyAgentInputs): Promise<ProxyAgent> {
  const { env, logs } = inputs;
  const log = logs.scope("default");
  const podNamespace = env.string("POD_NAMESPACE") || "default";
  const config = resolveProxyConfig({
    ...(existsSync(inputs.meshConfigFile)
      ? { meshConfig: { text: Deno.readTextFileSync(inputs.meshConfigFile), source: inputs.meshConfigFile } }
      : {}),
    env: env.string("PROXY_CONFIG"),
    annotation: readDownwardApiFile("./etc/mesh/pod/annotations", log)[PROXY_CONFIG_ANNOTATION],
  });
  exportProcessMetrics(inputs.metrics);
  // Settings read from JSON, and the CA's, are checked before anything is served.
  const caChoice = checkedCaChoice(env, podNamespace);
  const stsPort = inputs.stsPort ?? 0;
  if (stsPort < 0 || stsPort > 65_535) {
    throw new RangeError(`--stsPort=${stsPort} is not a port: expected 0 (off) to 65535`);
  }
  // The plugin's settings are checked now: a missing one stops startup instead of failing every exchange.
  const stsPlugin = stsPort === 0 ? undefined : tokenManagerPlugin(inputs.tokenManagerPlugin ?? "", {
    env,
    metrics: inputs.metrics,
    log: logs.scope("token"),
  });
  const appProbes = parseAppProbes(env.string("MESH_ORCH_APP_PROBERS"));
  const appMetrics = parseMetricsAnnotations(env.string("MESH_METRICS_ANNOTATIONS"), config.statusPort);
  // A missing proxy binary stops startup before anything is served, naming the path.
  if (config.binaryPath.includes("/")) {
    try {
      Deno.statSync(config.binaryPath);
    } catch (error) {
      throw new ProxyBinaryError(config.binaryPath, error);
    }
  }
  const hostIps = Deno.networkInterfaces().filter((i) => i.family === "IPv4" && i.name !== "lo").map((i) =>
    i.address
  );
  const labels = readDownwardApiFile("./etc/mesh/pod/labels", log);
  const nodeIps = [...new Set([env.string("INSTANCE_IP"), ...hostIps].filter((ip) => ip !== ""))];
  const node = buildProxyNode({
    role: inputs.role,
    podName: env.string("POD_NAME") || Deno.hostname(),
    podNamespace,
    ips: nodeIps,
    domain: inputs.domain || `${podNamespace}.svc.cluster.local`,
    meta: env.prefixed("MESH_META_"),
    metaJson: env.prefixed("MESH_METAJSON_"),
    labels,
    serviceCluster: inputs.serviceCluster,
    version: inputs.version,
    ...(config.tracing ? { proxyConfig: { tracing: config.tracing as JsonObject } } : {}),
  });

  // Bootstrap: ours, then MESH_BOOTSTRAP_OVERRIDE, checked against Envoy's schema before it is written.
  const dir = resolve(config.configPath);
  await Deno.mkdir(dir, { recursive: true });
  const xdsSocket = join(dir, "XDS");
  const sdsSocket = join(dir, "SDS");
  const ports = {
    statusPort: config.statusPort,
    adminPort: config.proxyAdminPort,
    statsPort: 15090,
    readinessPort: 15021,
  };
  // PROXY_XDS_VIA_AGENT=false, or CALL_CREDENTIALS: the proxy's ADS goes to the discovery server itself, as the
  // reference's bootstrap sends it; the agent's relay (and the DNS proxy fed by it) are then not started.
  const viaAgent = env.bool("PROXY_XDS_VIA_AGENT");
  const callCredentials = env.bool("CALL_CREDENTIALS");
  if (callCredentials && stsPort === 0) {
    throw new RangeError(
      "CALL_CREDENTIALS=true needs --stsPort: the proxy exchanges its token for call credentials at the agent's STS",
    );
  }
  const relayed = viaAgent && !callCredentials;
  if (!relayed && env.bool("MESH_META_DNS_CAPTURE")) {
    log.warn("no DNS proxy: its name table comes over the agent's xDS relay, which the proxy does not use", {
      setting: viaAgent ? "CALL_CREDENTIALS" : "PROXY_XDS_VIA_AGENT",
    });
  }
  const roots = rootSettings(env);
  const proxyXdsRoot = resolve(xdsRootPath(roots) ?? caRootPath(roots, WORKLOAD_PATHS.root));
  const xdsServerName = discoveryServerName(config.discoveryAddress);
  const directXds = relayed ? undefined : {
    address: config.discoveryAddress,
    mutualTls: config.controlPlaneAuthPolicy === "MUTUAL_TLS",
    rootCertPath: proxyXdsRoot,
    serverName: xdsServerName,
    ...(callCredentials ? { callCredentials: { stsPort, tokenPath: resolve(caChoice.tokenPath) } } : {}),
  };
  // MESH_BOOTSTRAP (the reference's ISTIO_BOOTSTRAP) wins over --templateFile, as it wins over every template.
  const templatePath = env.string("MESH_BOOTSTRAP") || inputs.templateFile;
  const templateSetting = env.string("MESH_BOOTSTRAP") ? "MESH_BOOTSTRAP" : "--templateFile";
  // A Go template instead of our bootstrap; the override and the schema check follow.
  let bootstrap = templatePath
    ? renderBootstrapTemplate(
      templatePath,
      bootstrapTemplateData({
        node,
        labels,
        config: { ...config },
        discoveryAddress: config.discoveryAddress,
        xdsSocket,
        sdsSocket,
        viaAgent,
        xdsRootCertPath: proxyXdsRoot,
        discoveryServerName: xdsServerName,
        callCredentials,
        stsPort,
        ...ports,
      }),
      templateSetting,
    )
    : defaultBootstrap({
      node,
      xdsSocket,
      sdsSocket,
      ...ports,
      ...(directXds ? { xds: directXds } : {}),
      telemetry: await telemetryOf(config, dir, inputs),
    });
  const overridePath = env.string("MESH_BOOTSTRAP_OVERRIDE");
  if (overridePath !== "") {
    bootstrap = mergeOverride(
      bootstrap,
      parseOverride(Deno.readTextFileSync(overridePath), overridePath),
    ) as never;
  }
  const described = templatePath ? `the bootstrap rendered from ${templatePath}` : "the bootstrap";
  validateBootstrap(bootstrap, overridePath === "" ? described : `${described} with ${overridePath}`);
  const bootstrapPath = join(dir, "envoy-rev0.json");
  await Deno.writeTextFile(bootstrapPath, JSON.stringify(bootstrap, null, 2));
  log.info("bootstrap written", { path: bootstrapPath, node: node.id });

  const upstream = env.string("XDS_UPSTREAM") || config.discoveryAddress;
  const savePath = env.string("LOCAL_XDS_GENERATOR_CONFIG_SAVE_PATH");
  // XDS_ROOT_CA (or DISCOVERY_CERT_PROVIDER's): the roots the discovery server's certificate must chain to,
  // when not the mesh CA's.
  const xdsRoot = xdsRootPath(roots);
  const xdsRootPem = xdsRoot === undefined ? undefined : readIfExists(xdsRoot);
  if (xdsRoot !== undefined && xdsRootPem === undefined) {
    const setting = roots.xdsRootCa ? "XDS_ROOT_CA" : `DISCOVERY_CERT_PROVIDER=${roots.provider}`;
    throw new Error(`${setting}: no file at ${xdsRoot}; expected the PEM roots of the discovery server`);
  }
  const outputDir = env.string("OUTPUT_CERTS");
  // GATEWAY_CREDENTIALS_DIR: credentialName folders a gateway serves, when the discovery server does not.
  const credentialsDir = env.string("GATEWAY_CREDENTIALS_DIR");
  const credentials = credentialsDir === "" ? undefined : new CredentialDirectory({
    dir: credentialsDir,
    layout: "flat",
    checkMs: CREDENTIALS_CHECK_MS,
    setting: "GATEWAY_CREDENTIALS_DIR",
    log: logs.scope("sds"),
  });
  const quit = Promise.withResolvers<string>();
  const failed = Promise.withResolvers<Error>();
  const drainVariable = env.resolved().find((v) => v.name === "TERMINATION_DRAIN_DURATION_SECONDS");
  const supervisor = new ProxySupervisor({
    binaryPath: config.binaryPath,
    bootstrapPath,
    drainSeconds: Math.ceil(config.drainDurationMs / 1000),
    parentShutdownSeconds: Math.ceil(config.parentShutdownDurationMs / 1000),
    serviceCluster: inputs.serviceCluster,
    serviceNode: node.id,
    logLevel: inputs.proxyLogLevel,
    componentLogLevel: inputs.proxyComponentLogLevel,
    concurrency: inputs.concurrency,
    adminPort: config.proxyAdminPort,
    role: inputs.role,
    // TERMINATION_DRAIN_DURATION_SECONDS, when set, wins over ProxyConfig's terminationDrainDuration.
    terminationDrainMs: drainVariable?.source === "environment"
      ? env.int("TERMINATION_DRAIN_DURATION_SECONDS") * 1000
      : config.terminationDrainDurationMs,
    onGiveUp: (error) => failed.resolve(error),
    log,
  });

  // Started in this order, stopped in reverse: the proxy drains first, the workload certificate goes last.
  let secrets!: SecretProvider;
  let dns: DnsProxy | undefined;
  const lifecycle = new Lifecycle([
    // The workload certificate (from the CA, or mounted files), served over SDS and used for the upstream xDS
    // connection; OUTPUT_CERTS gets a copy of every one.
    closingComponent("workload secrets", async () => {
      const started = await startWorkloadSecrets(
        env,
        config.discoveryAddress,
        caChoice,
        logs,
        inputs.metrics,
      );
      secrets = started.provider;
      const unmirror = outputDir === "" ? () => {} : await mirrorSecretFiles(outputDir, secrets, log);
      return [() => started.close(), unmirror];
    }),
    ...(credentials
      ? [{ name: "credentials dir", start: () => credentials.start(), stop: () => credentials.close() }]
      : []),
    closingComponent("sds", async () => {
      const sds = await startSdsServer({
        socket: sdsSocket,
        secrets,
        ...(credentials ? { credentials } : {}),
        log: logs.scope("sds"),
        metrics: inputs.metrics,
        staleRecycleMs: env.durationMs("STALED_CONNECTION_RECYCLE_RUN_INTERVAL"),
      });
      return [() => sds.close()];
    }),
    // DNS capture (sidecars, as Istio): the DNS proxy answers from the name table the xDS proxy subscribes to.
    ...(env.bool("MESH_META_DNS_CAPTURE") && inputs.role === "sidecar" && relayed
      ? [closingComponent("dns proxy", async () => {
        dns = await startDnsProxy({
          env,
          namespace: podNamespace,
          domain: inputs.domain || `${podNamespace}.svc.cluster.local`,
          log: logs.scope("dns"),
          metrics: inputs.metrics,
        });
        const started = dns;
        return [() => started.close()];
      })]
      : []),
    ...(relayed
      ? [closingComponent("xds proxy", async () => {
        const xds = await startXdsProxy({
          socket: xdsSocket,
          upstream: {
            address: upstream,
            mutualTls: config.controlPlaneAuthPolicy === "MUTUAL_TLS",
            serverName: discoveryServerName(upstream),
            ...(xdsRootPem !== undefined ? { rootPem: xdsRootPem } : {}),
          },
          secrets,
          log: logs.scope("xdsproxy"),
          metrics: inputs.metrics,
          maxReceiveMessageBytes: env.int("MESH_GPRC_MAXRECVMSGSIZE"),
          ...(savePath !== "" ? { snapshot: new XdsSnapshotWriter(savePath, logs.scope("xdsproxy")) } : {}),
          ...(dns ? { nameTable: { onTable: (table) => dns?.updateTable(table) } } : {}),
        });
        return [() => xds.close()];
      })]
      : []),
    ...(stsPlugin
      ? [closingComponent("sts", async () => {
        // The reference's choice: the IPv6 loopback when every address of the proxy is IPv6.
        const loopback = nodeIps.length > 0 && nodeIps.every((ip) => ip.includes(":")) ? "::1" : "127.0.0.1";
        const sts = await startStsServer(loopback, stsPort, stsPlugin, logs.scope("stsserver"));
        return [() => sts.shutdown()];
      })]
      : []),
    closingComponent("status", async () => {
      const status = await startStatusServer(config.statusPort, {
        adminPort: config.proxyAdminPort,
        metrics: inputs.metrics,
        probes: appProbes,
        ...(appMetrics ? { appMetrics } : {}),
        quit: () => quit.resolve("/quitquitquit"),
        log: logs.scope("healthcheck"),
      });
      return [() => status.shutdown()];
    }),
    { name: "proxy", start: () => supervisor.start(), stop: () => supervisor.stop() },
  ]);
  await lifecycle.start();
  return { quitRequested: quit.promise, failed: failed.promise, stop: () => lifecycle.stop() };
}

/** The bootstrap's tracer, access log service and outlier log; a Lightstep token is written where the proxy reads it. */
async function telemetryOf(
  config: ProxyConfig,
  dir: string,
  inputs: ProxyAgentInputs,
): Promise<BootstrapTelemetry> {
  const lightstepTokenFile = join(dir, "lightstep_access_token.txt");
  const lightstep = config.tracing?.lightstep as { accessToken?: unknown } | undefined;
  if (typeof lightstep?.accessToken === "string") {
    await Deno.writeTextFile(lightstepTokenFile, lightstep.accessToken, { mode: 0o600 });
  }
  const unsupported = unsupportedTracer(config.tracing);
  if (unsupported !== undefined) {
    inputs.logs.scope("default").warn(
      "the tracer is not configured by this agent and is left out of the bootstrap",
      {
        tracer: unsupported,
      },
    );
  }
  return bootstrapTelemetry({
    ...(config.tracing ? { tracing: config.tracing } : {}),
    ...(config.accessLogServiceAddress ? { accessLogServiceAddress: config.accessLogServiceAddress } : {}),
    outlierLogPath: inputs.outlierLogPath,
    serviceCluster: inputs.serviceCluster,
    lightstepTokenFile,
  });
}
