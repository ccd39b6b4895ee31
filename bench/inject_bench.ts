/**
 * The injection webhook's throughput and latency for a typical pod (one app container with a port and an HTTP
 * readiness probe, the reference's default template, values and mesh config): sequential requests through the
 * `/inject` handler, then the same with 16 in flight. Prints requests per second and p50/p99/max per request
 * (BENCHMARKS.md; target ≥ 500/s, p99 ≤ 20 ms).
 *
 * @module
 */
import { silentLogger } from "../shared/log/logger.ts";
import { Metrics } from "../shared/metrics/metrics.ts";
import { Router } from "../shared/http/router.ts";
import { caseState, conformanceCases, podReview } from "../discovery/inject/_conformance_support.ts";
import { injectWebhookRoutes } from "../discovery/inject/inject_webhook.ts";
import { summarize } from "./latency_stats.ts";

const hello = conformanceCases().find((c) => c.name === "hello-probes.yaml")!;
const state = caseState(hello);
const router = injectWebhookRoutes(new Router(), {
  metrics: new Metrics("discovery", { version: "bench", tag: "bench" }),
  log: silentLogger,
  state: () => state,
  revision: "default",
});
const pod = {
  metadata: {
    generateName: "hello-",
    labels: { app: "hello", version: "v1" },
    annotations: { team: "shop" },
  },
  spec: {
    containers: [{
      name: "hello",
      image: "hello:1",
      ports: [{ name: "http", containerPort: 8080 }],
      readinessProbe: { httpGet: { path: "/ready", port: "http" } },
    }],
  },
};
const body = JSON.stringify(podReview(pod, "shop"));

async function once(): Promise<number> {
  const started = performance.now();
  const response = await router.handle(
    new Request("https://bench/inject", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    }),
  );
  const review = await response.json();
  if (!review.response.allowed) throw new Error(`Refused: ${JSON.stringify(review.response.status)}`);
  return performance.now() - started;
}

async function run(label: string, total: number, inFlight: number): Promise<void> {
  const samples: number[] = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next++ < total) samples.push(await once());
  }));
  const seconds = (performance.now() - started) / 1000;
  const s = summarize(samples);
  console.log(
    `${label}: ${(total / seconds).toFixed(0)} requests/s, p50 ${s.p50.toFixed(2)} ms, ` +
      `p99 ${s.p99.toFixed(2)} ms, max ${s.max.toFixed(2)} ms (${total} requests)`,
  );
}

for (let i = 0; i < 200; i++) await once();
await run("sequential", 3000, 1);
await run("16 in flight", 3000, 16);
