/**
 * The config store, the ServiceEntry registry and the endpoint index, wired as the server wires them, taking a
 * load of config one write at a time, without the server around them (BENCHMARKS.md, config growth, third
 * pass): CPU time of each load, so runs on a shared machine compare. Loads: `--workloads` WorkloadEntries
 * over `--services` selecting ServiceEntries, and `--rounds` writes of one ServiceEntry with `--endpoints`
 * inline endpoints (each round new addresses, so each converts them all). `--copy` writes without handing the
 * resources over (the store clones them, as before the hand-over).
 *
 *   deno run --allow-read --allow-env bench/registry_config_load.ts [--workloads 4000] [--services 1] \
 *     [--endpoints 39000] [--rounds 8] [--copy]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { cpuUsage } from "node:process";
import type { Resource } from "../shared/config/resource.ts";
import { silentLogger } from "../shared/log/logger.ts";
import { MemoryConfigStore } from "../discovery/config/memory_config_store.ts";
import { ServiceEntryRegistry } from "../discovery/registry/serviceentry/service_entry_registry.ts";
import { EndpointIndex } from "../discovery/push/endpoint_index.ts";

const { values } = parseArgs({
  options: {
    workloads: { type: "string", default: "4000" },
    services: { type: "string", default: "1" },
    endpoints: { type: "string", default: "39000" },
    rounds: { type: "string", default: "8" },
    copy: { type: "boolean", default: false },
  },
});
const handOver = !values.copy;

function wired() {
  const store = new MemoryConfigStore();
  const registry = new ServiceEntryRegistry(store, {
    clusterId: "c1",
    appNamespaces: [],
    defaultExportTo: () => ["*"],
    log: silentLogger,
  });
  const index = new EndpointIndex(registry);
  registry.onEndpointEvent((e) => index.update(e));
  registry.start();
  return { store, index };
}

function resource(kind: string, name: string, spec: unknown): Resource {
  return {
    gvk: { group: "networking.mesh.io", version: "v1beta1", kind },
    meta: { name, namespace: "bench" },
    spec,
  };
}

function address(i: number, first = 10): string {
  return `${first}.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
}

const entrySpec = (i: number, extra: Record<string, unknown>) => ({
  hosts: [`svc-${i}.bench.example`],
  ports: [{ number: 8080, name: "http", protocol: "HTTP" }],
  resolution: "STATIC",
  location: "MESH_INTERNAL",
  ...extra,
});

/** CPU milliseconds `step` takes. */
function cpuMs(step: () => void): number {
  const before = cpuUsage();
  step();
  const used = cpuUsage(before);
  return Math.round((used.user + used.system) / 1000);
}

{
  const { store, index } = wired();
  const services = Number(values.services);
  for (let i = 0; i < services; i++) {
    store.apply(
      resource(
        "ServiceEntry",
        `se-${i}`,
        entrySpec(i, { workloadSelector: { labels: { app: `app-${i}` } } }),
      ),
    );
    index.update({ hostname: `svc-${i}.bench.example`, namespace: "bench" });
  }
  const workloads = Number(values.workloads);
  const ms = cpuMs(() => {
    for (let i = 0; i < workloads; i++) {
      const spec = { address: address(i), labels: { app: `app-${i % services}` } };
      store.apply(resource("WorkloadEntry", `we-${i}`, spec), { handOver });
    }
  });
  console.log(JSON.stringify({ load: `${workloads} WorkloadEntries over ${services} entries`, cpuMs: ms }));
}

{
  const { store } = wired();
  const perWrite: number[] = [];
  for (let round = 0; round < Number(values.rounds); round++) {
    const endpoints = Array.from(
      { length: Number(values.endpoints) },
      (_, i) => ({ address: address(i, 10 + round) }),
    );
    const entry = resource("ServiceEntry", `se-${round % 2}`, entrySpec(0, { endpoints }));
    perWrite.push(cpuMs(() => store.apply(entry, { handOver })));
  }
  console.log(
    JSON.stringify({ load: `a ServiceEntry with ${values.endpoints} endpoints, per write`, cpuMs: perWrite }),
  );
}
