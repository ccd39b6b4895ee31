/**
 * What large mesh objects from the orchestrator cost the server's event loop: `mesh-discovery` reading its
 * config from the in-process test API server, and a VirtualService of `--routes` regex routes (about 1 MiB at
 * 6,000, under the API server's 1.5 MiB object limit) updated `--updates` times, one update every
 * `--intervalMs`, while `/ready` is probed every 100 ms; with `--analysis`, the analyzers run on every change
 * (`DISCOVERY_ENABLE_ANALYSIS`). Prints one JSON line: the `/ready` latencies, how many
 * updates the server saw and whether the last one reached its config, its CPU and RSS.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-write --allow-env --allow-run=deno,cat \
 *     bench/orch_large_object.ts [--routes 6000] [--updates 10] [--intervalMs 2000] [--analysis]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type ApiObject, OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { startOrchDiscovery } from "./orch_discovery.ts";
import { processCpuMs, processMemory } from "./bench_processes.ts";
import { summarize } from "./latency_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    routes: { type: "string", default: "6000" },
    updates: { type: "string", default: "10" },
    intervalMs: { type: "string", default: "2000" },
    analysis: { type: "boolean", default: false },
  },
});
const routes = Number(values.routes);
const updates = Number(values.updates);

/** The VirtualService of generation `g`: every route's regexes name `g`, so each update changes them all. */
function bigVirtualService(g: number): ApiObject {
  return {
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "VirtualService",
    metadata: { name: "big", namespace: "shop" },
    spec: {
      hosts: ["ratings.shop.svc.cluster.local"],
      http: Array.from({ length: routes }, (_, i) => ({
        match: [{
          uri: { regex: `/api/g${g}/v${i}/(users|items)/[0-9]+` },
          headers: { "x-tenant": { regex: `t${i}-[a-z]+` } },
        }],
        route: [{ destination: { host: "ratings.shop.svc.cluster.local" } }],
      })),
    },
  };
}

const api = OrchApiServer.start();
api.apply({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "ratings", namespace: "shop" },
  spec: { clusterIP: "10.96.0.10", ports: [{ name: "http", port: 9080 }], selector: { app: "ratings" } },
});
const { server, addresses, stop } = await startOrchDiscovery(api, {
  prefix: "mesh_orch_large_",
  env: values.analysis ? { DISCOVERY_ENABLE_ANALYSIS: "true" } : {},
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const readyStatus = async () => {
  const response = await fetch(`http://${addresses.httpAddr}/ready`).catch(() => undefined);
  await response?.body?.cancel();
  return response?.status;
};
const updatesSeen = async () => {
  const text = await (await fetch(`http://${addresses.monitoringAddr}/metrics`)).text();
  const seen =
    text.match(/^discovery_orch_cfg_events\{[^}]*event="update"[^}]*type="VirtualService"[^}]*\} (\d+)/m) ??
      text.match(/^discovery_orch_cfg_events\{[^}]*type="VirtualService"[^}]*event="update"[^}]*\} (\d+)/m);
  return Number(seen?.[1] ?? 0);
};
try {
  await server.waitFor(/"msg":"discovery server started"/, 120_000);
  while (await readyStatus() !== 200) await sleep(50);
  api.apply(bigVirtualService(0));
  await sleep(5_000); // The first version's add and push settle before measuring.
  const pid = server.child.pid;
  const cpuBefore = processCpuMs(pid);
  const latencies: number[] = [];
  let failed = 0;
  let probing = true;
  const prober = (async () => {
    while (probing) {
      const started = performance.now();
      if (await readyStatus() !== 200) failed++;
      latencies.push(performance.now() - started);
      await sleep(100);
    }
  })();
  const started = performance.now();
  for (let g = 1; g <= updates; g++) {
    api.apply(bigVirtualService(g));
    await sleep(Number(values.intervalMs));
  }
  while ((await updatesSeen()) < updates && performance.now() - started < 120_000) await sleep(100);
  await sleep(3_000); // The last update's validation and push.
  probing = false;
  await prober;
  const configz = await (await fetch(`http://${addresses.httpAddr}/debug/configz`)).text();
  console.log(JSON.stringify({
    routes,
    objectBytes: JSON.stringify(bigVirtualService(updates)).length,
    updates,
    analysis: values.analysis,
    intervalMs: Number(values.intervalMs),
    updatesSeen: await updatesSeen(),
    lastUpdateApplied: configz.includes(`/api/g${updates}/v${routes - 1}/`),
    ready: { ...summarize(latencies), failed },
    serverCpuMs: processCpuMs(pid) - cpuBefore,
    wallMs: Math.round(performance.now() - started),
    rssMiB: Math.round(processMemory(pid).rssKiB / 1024),
    peakRssMiB: Math.round(processMemory(pid).peakRssKiB / 1024),
  }));
} finally {
  await stop();
  await api.close();
}
