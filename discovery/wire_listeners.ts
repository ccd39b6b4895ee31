/**
 * The plain listeners of `mesh-discovery`, wired for the composition root: xDS on `--grpcAddr`, readiness and
 * debug on `--httpAddr`, metrics on `--monitoringAddr` and ControlZ; each opens its port when its component
 * starts, after the modules it serves.
 *
 * @module
 */
import type { EnvSettings } from "@mesh/shared/env/env_settings";
import type { ListenAddress } from "@mesh/shared/http/listen_address";
import { Router } from "@mesh/shared/http/router";
import { type RunningServer, serveHttp, type ServeLimits } from "@mesh/shared/http/serve";
import { closingComponent, type Component } from "@mesh/shared/lifecycle";
import type { Logger } from "@mesh/shared/log/logger";
import type { LogManager } from "@mesh/shared/log/log_manager";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { BuildInfo } from "@mesh/shared/version/build_info";
import type { DiscoveryOptions } from "./cli/discovery_options.ts";
import { addCtrlzRoutes } from "./ctrlz/ctrlz_routes.ts";
import { openNativeHeapFigures } from "@mesh/shared/process/native_heap_figures";
import type { DebugInterface } from "./http/debug_interface.ts";
import { addMonitoringRoutes } from "./http/monitoring_routes.ts";
import { addReadyRoute, type Readiness } from "./http/readiness.ts";
import type { PushContext } from "./push/push_context.ts";
import { startXdsServer, type XdsServerOptions } from "./xds/mod.ts";

/** What the listeners serve; getters read what components listed before them built. */
export interface ListenersInputs {
  readonly options: DiscoveryOptions;
  readonly env: EnvSettings;
  readonly logs: LogManager;
  readonly metrics: Metrics;
  /** Build information, served with the monitoring routes and by ControlZ. */
  readonly info: BuildInfo;
  /** Monotonic process start, for ControlZ's start time. */
  readonly startedAt: number;
  /** The command line, shown by ControlZ. */
  readonly argv: readonly string[];
  readonly log: Logger;
  /** Connection and request limits of every HTTP listener. */
  readonly httpLimits: ServeLimits;
  /** The xDS server's options but for the address: the same service, logger and admission on both ports. */
  readonly xds: () => Omit<
    XdsServerOptions<PushContext>,
    "addr" | "flag" | "tls" | "services" | "authenticate"
  >;
  /** The debug interface over the running modules, built once when `--httpAddr` opens. */
  readonly debugInterface: () => DebugInterface;
  /** Readiness of every component, served at `/ready`. */
  readonly readiness: () => Readiness;
}

/** The listeners' components, and the servers they opened. */
export interface Listeners {
  /** The HTTP(S) servers opened, in start order. */
  readonly servers: readonly RunningServer[];
  /** A listener opened by `open` when it starts, and shut down when it stops. */
  listener(name: string, open: () => Promise<RunningServer>): Component;
  /** xDS on `--grpcAddr`. */
  grpc(): Component;
  /** `--httpAddr`, `--monitoringAddr` and ControlZ, in start order. */
  http(): Component[];
}

/** Wires the plain listeners; nothing opens until their components start. */
export function wireListeners(w: ListenersInputs): Listeners {
  const { options, env, log } = w;
  const servers: RunningServer[] = [];
  const listener = (name: string, open: () => Promise<RunningServer>): Component =>
    closingComponent(name, async () => {
      const server = await open();
      servers.push(server);
      return [() => server.shutdown()];
    });
  // An HTTP listener serving `router()`, built when it starts (the modules it reads have started by then).
  const httpListener = (name: string, addr: ListenAddress, flag: string, router: () => Router) =>
    listener(name, () => serveHttp(name, addr, router().handle, log, undefined, flag, w.httpLimits));
  let debug: DebugInterface | undefined;

  return {
    servers,
    listener,
    grpc: () =>
      closingComponent("grpc", async () => {
        const ads = await startXdsServer({ ...w.xds(), addr: options.grpcAddr });
        return [() => ads.close()];
      }),
    http: () => [
      httpListener("http", options.httpAddr, "--httpAddr", () => {
        debug = w.debugInterface();
        const http = addReadyRoute(new Router(), w.readiness());
        return env.bool("ENABLE_DEBUG_ON_HTTP") ? debug.mount(http) : http;
      }),
      httpListener(
        "monitoring",
        options.monitoringAddr,
        "--monitoringAddr",
        () => debug!.mount(addMonitoringRoutes(new Router(), w.metrics, w.info)),
      ),
      httpListener(
        "ControlZ",
        options.ctrlzAddr,
        "--ctrlz_address/--ctrlz_port",
        () => {
          const nativeHeap = openNativeHeapFigures();
          return addCtrlzRoutes(new Router(), {
            logs: w.logs,
            env,
            info: w.info,
            args: w.argv,
            startedAt: new Date(Date.now() - (performance.now() - w.startedAt)),
            allowRemote: env.bool("DEBUG_REMOTE_ACCESS"),
            metrics: () => w.metrics.render(),
            ...("read" in nativeHeap && { nativeHeap: nativeHeap.read }),
          });
        },
      ),
    ],
  };
}
