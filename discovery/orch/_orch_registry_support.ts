/**
 * What the orchestrator registry's tests share: a registry against the test API server, stopped and cleaned
 * up after the test's body, and the objects of a `ratings` service in namespace `shop`.
 *
 * @module
 */
import { type Logger, silentLogger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { Timers } from "@mesh/shared/time/timers";
import type { ApiObject, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { loadOrchConfig } from "./orch_client.ts";
import { RateLimiter } from "./rate_limiter.ts";
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
    log?: Logger;
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

/** The hostname of the `ratings` Service. */
export const HOST = "ratings.shop.svc.cluster.local";

/** The `ratings` Service of namespace `shop`, with `ports`. */
export function service(ports = [{ name: "http", port: 8080 }]): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "ratings", namespace: "shop", annotations: { "networking.mesh.io/exportTo": "." } },
    spec: { clusterIP: "10.96.0.10", ports, selector: { app: "ratings" } },
  };
}

/** A running pod of `ratings` at `ip` on `node-a`, with `labels` beside `app: ratings`. */
export function pod(name: string, ip: string, labels: Record<string, string> = {}): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "shop", labels: { app: "ratings", ...labels } },
    spec: { serviceAccountName: "ratings", nodeName: "node-a" },
    status: { podIP: ip, phase: "Running" },
  };
}

/** The Endpoints of `ratings`: `[pod, ip]` pairs ready and not ready, on port 9080. */
export function endpoints(ready: [string, string][], notReady: [string, string][] = []): ApiObject {
  const address = ([pod, ip]: [string, string]) => ({
    ip,
    nodeName: "node-a",
    targetRef: { kind: "Pod", name: pod, namespace: "shop" },
  });
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name: "ratings", namespace: "shop" },
    subsets: [{
      addresses: ready.map(address),
      notReadyAddresses: notReady.map(address),
      ports: [{ name: "http", port: 9080 }],
    }],
  };
}

/** The Node `node-a` the pods run on, in region `r1`, zone `z1`. */
export function node(): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: "node-a",
      labels: { "topology.kubernetes.io/region": "r1", "topology.kubernetes.io/zone": "z1" },
    },
  };
}
