/**
 * The orchestrator registry at cluster scale: `mesh-discovery --registries Orchestrator` against the in-process
 * test API server holding N services with P pods each (Endpoints naming every pod) on 50 nodes. Measures the
 * time from process start to the first full sync (`/ready` 200), then what one pod change and one Service
 * change cost: wall time until the push trigger is counted, server CPU spent, and the trigger's type
 * (a pod change must be an endpoint push, never a full one). Then node churn (`orch_node_churn.ts`): Node
 * updates that change only an annotation, at a steady rate; one Node's zone change (as the changes above); and
 * zone changes at a steady rate, each pushed before the next arrives.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-write --allow-env --allow-run=deno,cat \
 *     bench/orch_scale.ts [--services 1000] [--podsPerService 5] [--useEndpointSlices] \
 *     [--nodeUpdates 100] [--nodeUpdatesPerSecond 10] [--zoneChanges 10] [--zoneChangesPerSecond 1]
 *
 * Prints one JSON line of figures.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type ApiObject, OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { startOrchDiscovery } from "./orch_discovery.ts";
import { loadAverage, processCpuMs, processMemory } from "./bench_processes.ts";
import { nodeChurn } from "./orch_node_churn.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    services: { type: "string", default: "1000" },
    podsPerService: { type: "string", default: "5" },
    useEndpointSlices: { type: "boolean", default: false },
    nodeUpdates: { type: "string", default: "100" },
    nodeUpdatesPerSecond: { type: "string", default: "10" },
    zoneChanges: { type: "string", default: "10" },
    zoneChangesPerSecond: { type: "string", default: "1" },
  },
});
const services = Number(values.services);
const perService = Number(values.podsPerService);
const NODES = 50;
const NAMESPACES = 20;

const api = OrchApiServer.start();
const ns = (i: number) => `ns-${i % NAMESPACES}`;
const podName = (i: number, j: number) => `svc-${i}-pod-${j}`;
const podIp = (i: number, j: number) => {
  const n = i * perService + j;
  return `10.${Math.floor(n / 65536) % 256}.${Math.floor(n / 256) % 256}.${n % 256}`;
};
function pod(i: number, j: number, extraLabels: Record<string, string> = {}): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: podName(i, j), namespace: ns(i), labels: { app: `svc-${i}`, ...extraLabels } },
    spec: { serviceAccountName: `svc-${i}`, nodeName: `node-${(i + j) % NODES}` },
    status: { podIP: podIp(i, j), phase: "Running" },
  };
}
function service(i: number, port = 8080): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: `svc-${i}`, namespace: ns(i) },
    spec: {
      clusterIP: `10.96.${Math.floor(i / 256)}.${i % 256}`,
      ports: [{ name: "http", port }],
      selector: { app: `svc-${i}` },
    },
  };
}
const address = (i: number, j: number) => ({
  ip: podIp(i, j),
  nodeName: `node-${(i + j) % NODES}`,
  targetRef: { kind: "Pod", name: podName(i, j), namespace: ns(i) },
});

function node(n: number, zone = `z${n % 3}`, annotations: Record<string, string> = {}): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: `node-${n}`,
      labels: { "topology.kubernetes.io/region": "r1", "topology.kubernetes.io/zone": zone },
      annotations,
    },
  };
}

const loadStarted = performance.now();
for (let n = 0; n < NODES; n++) api.apply(node(n));
for (let i = 0; i < services; i++) {
  api.apply(service(i));
  for (let j = 0; j < perService; j++) api.apply(pod(i, j));
  const addresses = Array.from({ length: perService }, (_, j) => address(i, j));
  if (values.useEndpointSlices) {
    api.apply({
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: `svc-${i}-a`,
        namespace: ns(i),
        labels: { "kubernetes.io/service-name": `svc-${i}` },
      },
      addressType: "IPv4",
      endpoints: addresses.map((a) => ({
        addresses: [a.ip],
        conditions: { ready: true },
        nodeName: a.nodeName,
        targetRef: a.targetRef,
      })),
      ports: [{ name: "http", port: 9080 }],
    });
  } else {
    api.apply({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: `svc-${i}`, namespace: ns(i) },
      subsets: [{ addresses, ports: [{ name: "http", port: 9080 }] }],
    });
  }
}
const apiLoadMs = Math.round(performance.now() - loadStarted);

const spawned = performance.now();
const { server, addresses, stop } = await startOrchDiscovery(api, {
  prefix: "mesh_orch_scale_",
  flags: ["--orchApiQPS", "100"],
  env: values.useEndpointSlices ? { DISCOVERY_USE_ENDPOINT_SLICE: "true" } : {},
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const metricsText = async () => await (await fetch(`http://${addresses.monitoringAddr}/metrics`)).text();
const triggers = async (): Promise<Record<string, number>> => {
  const out: Record<string, number> = {};
  for (const m of (await metricsText()).matchAll(/^discovery_push_triggers\{type="([^"]+)"\} (\d+)/gm)) {
    out[m[1]] = Number(m[2]);
  }
  return out;
};
try {
  await server.waitFor(/"msg":"discovery server started"/, 120_000);
  let readyMs: number | undefined;
  while (readyMs === undefined && performance.now() - spawned < 300_000) {
    const response = await fetch(`http://${addresses.httpAddr}/ready`).catch(() => undefined);
    await response?.body?.cancel();
    if (response?.status === 200) readyMs = Math.round(performance.now() - spawned);
    else await sleep(50);
  }
  await sleep(2_000); // Let the first push settle.
  const pid = server.child.pid;
  const measure = async (change: () => void, what: string) => {
    const before = await triggers();
    const cpuBefore = processCpuMs(pid);
    const started = performance.now();
    change();
    let after = before;
    while (performance.now() - started < 60_000) {
      after = await triggers();
      if (Object.keys(after).some((k) => after[k] !== (before[k] ?? 0))) break;
      await sleep(10);
    }
    const triggeredMs = Math.round(performance.now() - started);
    await sleep(1_000); // The push itself runs after the trigger: include its CPU.
    const types = Object.keys(after).filter((k) => after[k] !== (before[k] ?? 0));
    return { what, triggeredMs, serverCpuMs: processCpuMs(pid) - cpuBefore, triggerTypes: types };
  };
  const podChange = await measure(() => api.apply(pod(7, 0, { version: "v2" })), "one pod's labels");
  const serviceChange = await measure(() => api.apply(service(7, 8081)), "one Service's port");
  const loadBeforeChurn = loadAverage();
  const nodeUpdatesHandled = async () => {
    for (const m of (await metricsText()).matchAll(/^discovery_orch_reg_events\{([^}]*)\} (\d+)/gm)) {
      if (m[1].includes('type="Nodes"') && m[1].includes('event="update"')) return Number(m[2]);
    }
    return 0;
  };
  let beat = 0;
  // Kubelets' heartbeats and controllers' annotations: the Node changes, nothing the mesh reads does.
  const nodeAnnotationChurn = await nodeChurn({
    pid,
    httpAddr: addresses.httpAddr,
    update: (n) => api.apply(node(n % NODES, undefined, { "bench.mesh.io/beat": String(beat++) })),
    handled: nodeUpdatesHandled,
    updates: Number(values.nodeUpdates),
    perSecond: Number(values.nodeUpdatesPerSecond),
  });
  // A fifth of the services have a pod on each node: a zone change moves their endpoints, and they are pushed.
  const nodeZoneChange = await measure(() => api.apply(node(0, "z-moved")), "one Node's zone");
  let move = 0;
  const nodeZoneChurn = await nodeChurn({
    pid,
    httpAddr: addresses.httpAddr,
    update: (n) => api.apply(node(n % NODES, `z-moved-${move++}`)),
    handled: nodeUpdatesHandled,
    updates: Number(values.zoneChanges),
    perSecond: Number(values.zoneChangesPerSecond),
  });
  const loadAfterChurn = loadAverage();
  console.log(JSON.stringify({
    services,
    pods: services * perService,
    nodes: NODES,
    endpointSlices: values.useEndpointSlices,
    apiServerLoadMs: apiLoadMs,
    startToReadyMs: readyMs ?? "not ready within 300 s",
    rssMiB: Math.round(processMemory(pid).rssKiB / 1024),
    peakRssMiB: Math.round(processMemory(pid).peakRssKiB / 1024),
    podChange,
    serviceChange,
    loadAverageBeforeChurn: loadBeforeChurn,
    loadAverageAfterChurn: loadAfterChurn,
    nodeAnnotationChurn,
    nodeZoneChange,
    nodeZoneChurn,
  }));
} finally {
  await stop();
  await api.close();
}
