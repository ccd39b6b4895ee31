import type { Metrics } from "@mesh/shared/metrics/metrics";
import { jsonResponse, type Router } from "@mesh/shared/http/router";
import type { BuildInfo } from "@mesh/shared/version/build_info";

/** Adds `/metrics` (Prometheus text) and `/version` (build info as JSON) to the monitoring router. */
export function addMonitoringRoutes(router: Router, metrics: Metrics, info: BuildInfo): Router {
  router.add("/metrics", "Prometheus metrics of this program", async () => {
    metrics.counter("scrapes_total").inc();
    try {
      return new Response(await metrics.render(), { headers: { "content-type": metrics.contentType } });
    } catch (error) {
      metrics.counter("scrape_failures_total").inc();
      throw error;
    }
  });
  router.add("/version", "Build information", () => jsonResponse(info));
  return router;
}
