import type { EnvSettings } from "@mesh/shared/env/env_settings";
import { jsonResponse } from "@mesh/shared/http/router";
import { meshConfigToJson } from "@mesh/shared/config/mesh";
import type { MemoryConfigStore, MeshWatcher } from "./config/mod.ts";
import type { MemoryAnalysisSink } from "./analysis/analysis_sink.ts";
import { addAnalysisDebugRoutes } from "./http/analysis_debug_routes.ts";
import { addDebugOverview } from "./http/debug_overview_routes.ts";
import type { OverviewDuty } from "./http/debug_overview_page.ts";
import { DebugInterface, MAX_DEBUG_RESPONSES } from "./http/debug_interface.ts";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { PeerLogLimiter } from "@mesh/shared/log/peer_log_limiter";
import { InspectorProfiler } from "./http/inspector_profiler.ts";
import { addModelDebugRoutes } from "./http/model_debug_routes.ts";
import { addPprofRoutes } from "./http/pprof_routes.ts";
import { type ConfigSource, rejectedByAll } from "./model/config_source.ts";
import type { PushContext } from "./push/push_context.ts";
import type { PushHistory } from "./push/push_history.ts";
import type { PushPipeline } from "./push/push_pipeline.ts";
import type { Registries } from "./registry/build_registries.ts";
import { addXdsDebugRoutes, type AdsServer } from "./xds/mod.ts";
import { proxyOverview } from "./xds/proxy_overview.ts";
import type { RemoteClusterStatus } from "./orch/remote_clusters.ts";
import { clusterzView } from "./http/clusterz.ts";

/** What the debug interface of `mesh-discovery` reads: the running modules, once they are built. */
export interface DebugWiring {
  readonly env: EnvSettings;
  /** `--profile`: serve profiling at `/debug/pprof`. */
  readonly profile: boolean;
  readonly store: MemoryConfigStore;
  readonly mesh: MeshWatcher;
  readonly registries: Registries;
  readonly pipeline: PushPipeline;
  readonly discovery: AdsServer<PushContext>;
  /** Config sources by the name `/debug/configz` shows them under. */
  readonly configSources: ReadonlyMap<string, ConfigSource>;
  readonly pushHistory: PushHistory;
  /** The roots that verify the server, when the CA runs: served at `/debug/ca_roots`. */
  readonly servedRootsPem?: () => string;
  /** `ENABLE_ADMIN_ENDPOINTS`: the xDS debug routes that act (push, ...) are served. */
  readonly adminEndpoints: boolean;
  /** The last analysis result and the analyzers that run, when DISCOVERY_ENABLE_ANALYSIS is on. */
  readonly analysis?: { readonly sink: MemoryAnalysisSink; readonly analyzers: readonly string[] };
  /** The remote clusters read from Secrets and their sync state, for `/debug/clusterz`; none when absent. */
  readonly remoteClusters?: () => readonly RemoteClusterStatus[];
  /** The singleton duties: which this replica leads, and the holder of each. */
  readonly duties: () => readonly OverviewDuty[];
  /** Where refused debug requests are counted (`http_server_refused{server="debug"}`) and logged. */
  readonly metrics: Metrics;
  readonly log: Logger;
}

/** The debug interface (model, xDS, overview, CA roots, profiling) over the running modules. */
export function wireDebugInterface(w: DebugWiring): DebugInterface {
  const { env, mesh, discovery } = w;
  const paced = new PeerLogLimiter();
  const debug = new DebugInterface({
    allowRemote: env.bool("DEBUG_REMOTE_ACCESS"),
    refused: () => {
      w.metrics.counter("http_server_refused").inc({ server: "debug", reason: "responses" });
      paced.log(
        "responses",
        (suppressed) =>
          w.log.warn("Refused a debug request: its answers in progress are at their bound", {
            max: MAX_DEBUG_RESPONSES,
            suppressed,
          }),
      );
    },
  });
  const rejected = () => rejectedByAll(w.configSources.values());
  addModelDebugRoutes(debug, {
    store: w.store,
    registry: w.registries.aggregate,
    endpoints: w.pipeline.endpoints,
    push: () => w.pipeline.stage.current(),
    rejected,
    sourceStatus: () => ({
      ...Object.fromEntries([...w.configSources].map(([name, source]) => [name, source.status()])),
      meshFiles: mesh.status(),
    }),
    proxies: () => discovery.connections().map((c) => c.proxy),
    // Durations print in Go's form (`10s`) rather than as nanosecond integers.
    mesh: () =>
      JSON.parse(
        meshConfigToJson({ meshConfig: mesh.current(), meshNetworks: mesh.networks(), files: mesh.status() }),
      ),
    env,
    ...(w.analysis && { analysis: () => w.analysis!.sink.view().resources }),
  });
  addAnalysisDebugRoutes(debug, {
    analyzers: w.analysis?.analyzers ?? [],
    ...(w.analysis && { view: () => w.analysis!.sink.view() }),
  });
  addXdsDebugRoutes(debug.router, discovery, { adminEndpoints: w.adminEndpoints });
  debug.add(
    "/debug/clusterz",
    "The clusters whose services and endpoints this server reads: its own, then the remote ones with their sync state",
    () => jsonResponse(clusterzView(w.registries.aggregate, w.remoteClusters?.() ?? [])),
  );
  addDebugOverview(debug, {
    proxies: () => proxyOverview(discovery),
    latestPush: () => discovery.pushContext?.version,
    store: w.store,
    rejected,
    pushes: w.pushHistory,
    duties: w.duties,
  });
  const servedRootsPem = w.servedRootsPem;
  if (servedRootsPem) {
    debug.add(
      "/debug/ca_roots",
      "Roots that verify the discovery server (PEM): the CA's, the current one first, then --caCertFile's",
      () => new Response(servedRootsPem(), { headers: { "content-type": "application/x-pem-file" } }),
    );
  }
  if (w.profile) addPprofRoutes(debug, new InspectorProfiler());
  return debug;
}
