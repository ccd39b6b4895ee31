import assert from "node:assert/strict";
import { RecordingLogger } from "../../shared/testing/recording_logger.ts";
import { httpSource, mergeStats, parseMetricsAnnotations } from "./merged_stats.ts";

Deno.test("parseMetricsAnnotations reads where to scrape the application, or nothing", () => {
  assert.deepEqual(parseMetricsAnnotations('{"scrape":"true","path":"/stats","port":"9090"}'), {
    port: 9090,
    path: "/stats",
  });
  assert.deepEqual(parseMetricsAnnotations('{"scrape":"true"}'), { port: 80, path: "/metrics" });
  assert.equal(parseMetricsAnnotations('{"scrape":"false","port":"9090"}'), undefined);
  assert.equal(parseMetricsAnnotations(""), undefined);
  assert.throws(
    () => parseMetricsAnnotations('{"scrape":"true","port":"x"}'),
    /MESH_METRICS_ANNOTATIONS: port "x"/,
  );
});

Deno.test("mergeStats joins every source in order, a failed one as a comment logged once", async () => {
  const app = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("# TYPE app_requests counter\napp_requests 7"),
  );
  const log = new RecordingLogger();
  const failing = new Set<string>();
  const sources = [
    { name: "proxy stats", read: () => Promise.resolve("envoy_up 1\n") },
    httpSource("application metrics", `http://127.0.0.1:${app.addr.port}/metrics`),
    { name: "agent metrics", read: () => Promise.reject(new Error("registry closed")) },
  ];
  try {
    const text = await mergeStats(sources, log, failing);
    assert.equal(
      text,
      "envoy_up 1\n# TYPE app_requests counter\napp_requests 7\n# agent metrics unavailable: registry closed\n",
    );
    await mergeStats(sources, log, failing);
    assert.equal(log.matching("warn", "unavailable").length, 1, "logged once while it keeps failing");
  } finally {
    await app.shutdown();
  }
});
