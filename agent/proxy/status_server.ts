/**
 * The agent's status port (15020): `/healthz/ready` answers 200 once the proxy says it is live and has its
 * first configuration (its admin `/ready`), 503 with the reason before; `/stats/prometheus` merges the proxy's
 * stats, the application's metrics (when annotated) and the agent's own; `/app-health/<container>/<probe>`
 * runs the container's rewritten probe; `/quitquitquit` (POST, loopback callers only) asks the agent to shut
 * down.
 *
 * @module
 */
import { Router } from "../../shared/http/router.ts";
import { type RunningServer, serveHttp } from "../../shared/http/serve.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { Metrics } from "../../shared/metrics/metrics.ts";
import type { AppProbes } from "./app_probe_config.ts";
import { runAppProbe } from "./app_probers.ts";
import { MergedStats, STATS_CONTENT_TYPE } from "./merged_stats.ts";
import type { AppMetricsTarget } from "./metrics_annotations.ts";
import { httpStatsSource, registryStatsSource, type StatsSource } from "./stats_sources.ts";

/** What the status server reads and can do. */
export interface StatusDeps {
  /** The proxy's admin port. */
  readonly adminPort: number;
  /** The application's metrics, when it asked to be scraped (`MESH_METRICS_ANNOTATIONS`). */
  readonly appMetrics?: AppMetricsTarget;
  /** The agent's own metrics, served with the proxy's; scrapes and failed sources are counted here. */
  readonly metrics: Metrics;
  /** Per-source timeout and size cap of `/stats/prometheus`; the defaults suit production. */
  readonly statsLimits?: { readonly timeoutMs?: number; readonly maxBytes?: number };
  /** Rewritten application probes by path, parsed at startup from `MESH_ORCH_APP_PROBERS`. */
  readonly probes?: AppProbes;
  /** Asks the agent to drain and exit. */
  readonly quit: () => void;
  readonly log: Logger;
}

async function proxyReady(adminPort: number): Promise<{ ready: boolean; reason: string }> {
  try {
    const response = await fetch(`http://127.0.0.1:${adminPort}/ready`, {
      signal: AbortSignal.timeout(1000),
    });
    const text = (await response.text()).trim();
    if (response.status === 200 && text === "LIVE") return { ready: true, reason: "LIVE" };
    return { ready: false, reason: `proxy admin /ready answered ${response.status} ${text}` };
  } catch (error) {
    return {
      ready: false,
      reason: `proxy admin on port ${adminPort} is not answering: ${(error as Error).message}`,
    };
  }
}

/** Serves the status port on `port` (all interfaces: the orchestrator probes it from outside the pod). */
export async function startStatusServer(port: number, deps: StatusDeps): Promise<RunningServer> {
  const router = new Router();
  router.add("/healthz/ready", "200 once the proxy is live with its first configuration", async () => {
    const { ready, reason } = await proxyReady(deps.adminPort);
    return new Response(ready ? "ready\n" : `not ready: ${reason}\n`, { status: ready ? 200 : 503 });
  });
  // The application's metrics go last: were they OpenMetrics despite the Accept header, their closing `# EOF`
  // would end the exposition for a parser that honours it.
  const sources: StatsSource[] = [
    // The admin API serves what the proxy's 15090 listener routes to it, without depending on that listener.
    httpStatsSource("envoy", `http://127.0.0.1:${deps.adminPort}/stats/prometheus`),
    registryStatsSource("agent", deps.metrics),
    ...(deps.appMetrics
      ? [httpStatsSource("application", `http://127.0.0.1:${deps.appMetrics.port}${deps.appMetrics.path}`)]
      : []),
  ];
  const stats = new MergedStats({ sources, metrics: deps.metrics, log: deps.log, ...deps.statsLimits });
  router.add(
    "/stats/prometheus",
    "The proxy's, the agent's and the application's metrics",
    async () => new Response(await stats.render(), { headers: { "content-type": STATS_CONTENT_TYPE } }),
  );
  for (const [path, probe] of Object.entries(deps.probes ?? {})) {
    router.add(path, `The application's ${path.split("/").at(-1)} probe`, async () => {
      const result = await runAppProbe(probe);
      return new Response(result.error === undefined ? null : `${result.error}\n`, { status: result.status });
    });
  }
  router.add("/quitquitquit", "Drains and stops the agent (POST from loopback only)", (request) => {
    const host = new URL(request.url).hostname;
    const forwarded = request.headers.get("x-forwarded-for");
    if (forwarded !== null || !["127.0.0.1", "localhost", "[::1]"].includes(host)) {
      return new Response("only from loopback\n", { status: 403 });
    }
    deps.log.info("asked to quit through /quitquitquit");
    deps.quit();
    return new Response("OK\n");
  }, ["POST"]);
  return await serveHttp("status", { hostname: "0.0.0.0", port }, router.handle, deps.log);
}
