/**
 * What the orchestrator registry's tests share: a registry against the test API server, stopped and cleaned
 * up after the test's body.
 *
 * @module
 */
import { silentLogger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { Timers } from "@mesh/shared/time/timers";
import type { OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { loadOrchConfig, RateLimiter } from "./orch_client.ts";
import { OrchRegistry } from "./orch_registry.ts";

/** Runs `fn` with a started registry reading `api` (domain `cluster.local`, cluster `c1`), then stops it. */
export async function withRegistry(
  api: OrchApiServer,
  fn: (r: OrchRegistry) => Promise<void>,
  extra: {
    useEndpointSlices?: boolean;
    resyncMs?: number;
    resyncSliceMs?: number;
    metrics?: Metrics;
    timers?: Timers;
  } = {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "mesh_orch_" });
  await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
  const registry = new OrchRegistry({
    kubeConfig: loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }),
    limiter: new RateLimiter(1000, 100),
    log: silentLogger,
    domain: "cluster.local",
    clusterId: "c1",
    defaultExportTo: ["*"],
    edsForHeadless: false,
    retryMs: 50,
    ...extra,
  });
  try {
    registry.start();
    await fn(registry);
  } finally {
    await registry.stop();
    await Deno.remove(dir, { recursive: true });
  }
}
