/**
 * Remote clusters at scale: `mesh-discovery --registries Orchestrator` against a local test API server, then
 * C remote clusters (each its own in-process test API server) of N services with P pods each, added at once by
 * C Secrets created in the local cluster. Every remote cluster has the same service names (as a multi-primary
 * mesh does), so their services merge into N services whose endpoints come from all of them. Measures the time
 * from creating the Secrets until `/debug/clusterz` shows every remote synced with all its services, the
 * server's memory before and after, and its CPU over the sync.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-write --allow-env --allow-run=deno,cat \
 *     bench/multicluster_scale.ts [--clusters 3] [--services 2000] [--podsPerService 2]
 *
 * Prints one JSON line of figures.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { parseArgs } from "node:util";
import { type ApiObject, OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { startOrchDiscovery } from "./orch_discovery.ts";
import { loadAverage, machineInfo, processCpuMs, processMemory } from "./bench_processes.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    clusters: { type: "string", default: "3" },
    services: { type: "string", default: "2000" },
    podsPerService: { type: "string", default: "2" },
  },
});
const clusters = Number(values.clusters);
const services = Number(values.services);
const perService = Number(values.podsPerService);
const NAMESPACES = 20;
const ns = (i: number) => `ns-${i % NAMESPACES}`;

/** A remote cluster's API server holding N services, P ready pods each, on its own pod range `10.<c>.0.0/16`. */
function remoteCluster(c: number): OrchApiServer {
  const api = OrchApiServer.start();
  const ip = (i: number, j: number) => {
    const n = i * perService + j;
    return `10.${c}.${Math.floor(n / 256) % 256}.${n % 256}`;
  };
  for (let i = 0; i < services; i++) {
    api.apply({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: `svc-${i}`, namespace: ns(i) },
      spec: {
        clusterIP: `10.${100 + c}.${Math.floor(i / 256)}.${i % 256}`,
        ports: [{ name: "http", port: 8080 }],
        selector: { app: `svc-${i}` },
      },
    });
    const addresses: unknown[] = [];
    for (let j = 0; j < perService; j++) {
      const name = `svc-${i}-pod-${j}`;
      api.apply({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace: ns(i), labels: { app: `svc-${i}` } },
        spec: { serviceAccountName: `svc-${i}` },
        status: { podIP: ip(i, j), phase: "Running" },
      } as ApiObject);
      addresses.push({ ip: ip(i, j), targetRef: { kind: "Pod", name, namespace: ns(i) } });
    }
    api.apply({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: `svc-${i}`, namespace: ns(i) },
      subsets: [{ addresses, ports: [{ name: "http", port: 9080 }] }],
    });
  }
  return api;
}

const local = OrchApiServer.start();
const loadStarted = performance.now();
const remotes = Array.from({ length: clusters }, (_, c) => remoteCluster(c + 1));
const apiLoadMs = Math.round(performance.now() - loadStarted);

const { server, addresses, stop } = await startOrchDiscovery(local, {
  prefix: "mesh_multicluster_scale_",
  flags: ["--clusterRegistriesNamespace", "mesh-system"],
  env: { CLUSTER_ID: "local" },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
type Clusterz = { remote: { clusterId: string; state: string; services: number }[] };
const clusterz = async (): Promise<Clusterz> =>
  await (await fetch(`http://${addresses.httpAddr}/debug/clusterz`)).json();
try {
  await server.waitFor(/"msg":"discovery server started"/, 120_000);
  for (let ready = false; !ready; await sleep(50)) {
    const response = await fetch(`http://${addresses.httpAddr}/ready`);
    await response.body?.cancel();
    ready = response.status === 200;
  }
  await sleep(2_000);
  const pid = server.child.pid;
  const before = processMemory(pid);
  const cpuBefore = processCpuMs(pid);
  const started = performance.now();
  remotes.forEach((api, c) =>
    local.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: `cluster-${c + 1}`,
        namespace: "mesh-system",
        labels: { "mesh/multiCluster": "true" },
      },
      data: { [`remote-${c + 1}`]: Buffer.from(api.kubeconfig()).toString("base64") },
    })
  );
  let syncedMs: number | undefined;
  while (syncedMs === undefined && performance.now() - started < 600_000) {
    const { remote } = await clusterz();
    if (remote.length === clusters && remote.every((r) => r.state === "synced" && r.services === services)) {
      syncedMs = Math.round(performance.now() - started);
    } else await sleep(50);
  }
  const syncCpuMs = processCpuMs(pid) - cpuBefore;
  await sleep(5_000); // The full push of the merged services follows the sync.
  const after = processMemory(pid);
  console.log(JSON.stringify({
    clusters,
    servicesPerCluster: services,
    podsPerCluster: services * perService,
    apiServerLoadMs: apiLoadMs,
    secretsToAllSyncedMs: syncedMs ?? "not synced within 600 s",
    serverCpuToSyncedMs: syncCpuMs,
    rssBeforeMiB: Math.round(before.rssKiB / 1024),
    rssAfterMiB: Math.round(after.rssKiB / 1024),
    peakRssMiB: Math.round(after.peakRssKiB / 1024),
    machine: machineInfo(),
    loadAverageAfter: loadAverage(),
  }));
} finally {
  await stop();
  await Promise.all([local, ...remotes].map((api) => api.close()));
}
