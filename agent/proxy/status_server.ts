/**
 * The agent's status port (15020): `/healthz/ready` answers 200 once the proxy says it is live and has its
 * first configuration (its admin `/ready`), 503 with the reason before; `/app-health/<container>/<kind>` runs
 * the application probe configured for that path (`MESH_ORCH_APP_PROBERS`); `/stats/prometheus` serves the
 * proxy's, the agent's and (with `MESH_METRICS_ANNOTATIONS`) the application's metrics in one exposition;
 * `/quitquitquit` (POST, loopback callers only) asks the agent to shut down.
 *
 * @module
 */
import { HttpError, Router } from "@mesh/shared/http/router";
import { isLoopbackAddress, peerAddress, type RunningServer, serveHttp } from "@mesh/shared/http/serve";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import {
  APP_HEALTH_PATH,
  APP_PROBERS_VARIABLE,
  appProbeFor,
  type AppProbes,
  NO_APP_PROBES,
} from "./app_probe_config.ts";
import { runAppProbe } from "./app_probers.ts";
import { FailureLog } from "./failure_log.ts";
import { MergedStats, STATS_CONTENT_TYPE } from "./merged_stats.ts";
import type { AppMetricsTarget } from "./metrics_annotations.ts";
import { httpStatsSource, registryStatsSource, type StatsSource } from "./stats_sources.ts";
import { bytesInPieces, ResponseBound } from "@mesh/shared/http/response_bound";

/** What the status server reads and can do. */
export interface StatusDeps {
  /** The proxy's admin port. */
  readonly adminPort: number;
  /** Asks the agent to drain and exit. */
  readonly quit: () => void;
  /** The application probes by path, parsed at startup from `MESH_ORCH_APP_PROBERS`; none when absent. */
  readonly probes?: AppProbes;
  /** Where the application's metrics are scraped from (`MESH_METRICS_ANNOTATIONS`); not scraped when absent. */
  readonly appMetrics?: AppMetricsTarget;
  /** The agent's own metrics, served with the proxy's; `scrapes_total` and its failures are counted here. */
  readonly metrics: Metrics;
  /** Seconds since the agent process started, for `startup_duration_seconds`; default the runtime's clock. */
  readonly uptimeSeconds?: () => number;
  /** Per-source timeout and size cap of `/stats/prometheus`; defaults suit production. */
  readonly statsLimits?: { readonly timeoutMs?: number; readonly maxBytes?: number };
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

/**
 * Responses of `/stats/prometheus` being sent at once; more are answered 503. A response keeps the exposition
 * it sends until its client has read it (up to the listener's 60 s idle time), and one scraper reading slowly
 * on many connections, each asked after the last scrape ended, would otherwise hold as many expositions of up
 * to 32 MiB a source. Prometheus asks one at a time, a pair of them two.
 */
export const MAX_STATS_RESPONSES = 4;

/** The status port's routes, without a socket: what {@link startStatusServer} serves. */
export function statusRouter(deps: StatusDeps): Router {
  const router = new Router();
  const uptime = deps.uptimeSeconds ?? (() => performance.now() / 1000);
  // As the reference: the startup time is recorded when a readiness probe succeeds after none or a failure.
  let wasReady = false;
  router.add("/healthz/ready", "200 once the proxy is live with its first configuration", async () => {
    const { ready, reason } = await proxyReady(deps.adminPort);
    if (ready && !wasReady) deps.metrics.gauge("startup_duration_seconds").set(uptime());
    wasReady = ready;
    return new Response(ready ? "ready\n" : `not ready: ${reason}\n`, { status: ready ? 200 : 503 });
  });

  const probeFailures = new FailureLog(deps.log, "application probe");
  router.add(
    "/app-health/",
    "The application's probe for this path, run from the pod",
    async (_request, url) => {
      const probe = appProbeFor(deps.probes ?? NO_APP_PROBES, url.pathname);
      if (probe === undefined) {
        // The path is named only when it has the strict probe-path shape, so no caller text is reflected.
        throw new HttpError(
          404,
          APP_HEALTH_PATH.test(url.pathname)
            ? `No application probe is configured for ${url.pathname}; ${APP_PROBERS_VARIABLE} names the probed paths`
            : "Not an application probe path: expected /app-health/<container>/<livez|readyz|startupz>",
        );
      }
      const outcome = await runAppProbe(probe);
      if (outcome.error === undefined) {
        probeFailures.succeeded(url.pathname);
        return new Response(null, { status: outcome.status });
      }
      probeFailures.failed(url.pathname, outcome.error);
      return new Response(`${outcome.error}\n`, { status: outcome.status });
    },
  );

  // The application's metrics go last: were they OpenMetrics despite our Accept header, their closing `# EOF`
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
  const busyLog = new FailureLog(deps.log, "metrics scrape");
  const sending = new ResponseBound(MAX_STATS_RESPONSES);
  router.add("/stats/prometheus", "The proxy's, the agent's and the application's metrics", async () => {
    // The responses of a shared scrape each send views of the same bytes, a piece as the client reads: handed
    // whole, each response would be a copy of it.
    const response = await sending.run(async () =>
      new Response(bytesInPieces(await stats.render()), { headers: { "content-type": STATS_CONTENT_TYPE } })
    );
    if (response !== undefined) {
      busyLog.succeeded("busy");
      return response;
    }
    const reason = `${MAX_STATS_RESPONSES} expositions are being sent; retry`;
    deps.metrics.counter("scrape_failures_total").inc({ type: "busy" });
    busyLog.failed("busy", reason);
    return new Response(`${reason}\n`, { status: 503, headers: { "retry-after": "1" } });
  });

  router.add("/quitquitquit", "Drains and stops the agent (POST from loopback only)", (request) => {
    // Decided by the TCP peer, never by headers (Host, X-Forwarded-For) that any caller writes as it likes.
    const peer = peerAddress(request);
    if (peer !== undefined && !isLoopbackAddress(peer.hostname)) {
      return new Response("only from loopback\n", { status: 403 });
    }
    deps.log.info("asked to quit through /quitquitquit");
    deps.quit();
    return new Response("OK\n");
  }, ["POST"]);
  return router;
}

/** Serves the status port on `port` (all interfaces: the orchestrator probes it from outside the pod). */
export async function startStatusServer(port: number, deps: StatusDeps): Promise<RunningServer> {
  return await serveHttp(
    "status",
    { hostname: "0.0.0.0", port },
    statusRouter(deps).handle,
    deps.log,
    undefined,
    undefined,
    { metrics: deps.metrics },
  );
}
