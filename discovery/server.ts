import { Router } from "../shared/http/router.ts";
import { type RunningServer, serveHttp } from "../shared/http/serve.ts";
import type { LogManager } from "../shared/log/log_manager.ts";
import type { Metrics } from "../shared/metrics/metrics.ts";
import type { BuildInfo } from "../shared/version/build_info.ts";
import type { DiscoveryOptions } from "./cli/discovery_options.ts";
import { FileConfigSource, MemoryConfigStore, MeshWatcher } from "./config/mod.ts";
import { addCtrlzRoutes } from "./ctrlz/ctrlz_routes.ts";
import { addMonitoringRoutes } from "./http/monitoring_routes.ts";
import { startWebhookServer, webhookServingNames } from "./webhook/mod.ts";

/** What the composition root needs from outside: parsed options and the process-wide services. */
export interface DiscoveryDeps {
  readonly logs: LogManager;
  readonly metrics: Metrics;
  readonly info: BuildInfo;
  /** Monotonic process start, for `startup_duration_seconds`. */
  readonly startedAt: number;
  /** The command line, shown by ControlZ. */
  readonly argv: readonly string[];
}

/** A running discovery server. */
export interface DiscoveryServer {
  readonly servers: readonly RunningServer[];
  close(): Promise<void>;
}

/** Wires and starts every module of `mesh-discovery discovery`. The only file that knows them all. */
export async function startDiscovery(
  options: DiscoveryOptions,
  deps: DiscoveryDeps,
): Promise<DiscoveryServer> {
  const log = deps.logs.scope("default");
  const servers: RunningServer[] = [];
  const store = new MemoryConfigStore({ logger: deps.logs.scope("model") });
  const files = new FileConfigSource({
    dir: options.configDir,
    store,
    defaultNamespace: "default",
    logger: deps.logs.scope("source"),
    metrics: deps.metrics,
  });
  await files.start();
  const mesh = new MeshWatcher({
    meshConfigFile: options.meshConfigFile,
    networksFile: options.networksConfigFile,
    logger: deps.logs.scope("default"),
  });
  await mesh.start();
  const monitoring = addMonitoringRoutes(new Router(), deps.metrics, deps.info);
  servers.push(await serveHttp("monitoring", options.monitoringAddr, monitoring.handle, log));
  const ctrlz = addCtrlzRoutes(new Router(), {
    logs: deps.logs,
    env: options.env,
    info: deps.info,
    args: deps.argv,
    startedAt: new Date(Date.now() - (performance.now() - deps.startedAt)),
  });
  servers.push(await serveHttp("ControlZ", options.ctrlzAddr, ctrlz.handle, log));
  const webhook = await startWebhookServer({
    addr: options.httpsAddr,
    tlsCertFile: options.tlsCertFile,
    tlsKeyFile: options.tlsKeyFile,
    servingNames: webhookServingNames(options.namespace),
    validationEnabled: options.env.bool("VALIDATION_ENABLED"),
    metrics: deps.metrics,
    log: deps.logs.scope("validationServer"),
  });
  servers.push(webhook.server);
  deps.metrics.gauge("startup_duration_seconds").set((performance.now() - deps.startedAt) / 1000);
  log.info("discovery server ready", {
    registries: options.registries,
    configDir: options.configDir,
    resources: store.size,
    rejected: files.rejected().length,
  });
  return {
    servers,
    async close() {
      await Promise.all(servers.map((s) => s.shutdown()));
      await files.stop();
      await mesh.stop();
    },
  };
}
