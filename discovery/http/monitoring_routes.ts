import type { Metrics } from "../../shared/metrics/metrics.ts";
import { jsonResponse, type Router } from "../../shared/http/router.ts";
import type { BuildInfo } from "../../shared/version/build_info.ts";

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
