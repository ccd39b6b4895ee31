import assert from "node:assert/strict";
import fc from "fast-check";
import { silentLogger } from "@mesh/shared/log/logger";
import type { ServiceEntrySpec } from "@mesh/shared/config/networking/service_entry";
import type { WorkloadEntrySpec } from "@mesh/shared/config/networking/workload_entry";
import type { MemoryConfigStore } from "../../config/memory_config_store.ts";
import type { Service } from "../../model/service.ts";
import { parseProxy } from "../../model/proxy.ts";
import { networking, orderedStore, sidecar } from "../_test_support.ts";
import { workloadInstances } from "./convert_service_entry.ts";
import { sameEndpoints } from "./entry_state.ts";
import { ServiceEntryRegistry, type ServiceEntryRegistryOptions } from "./service_entry_registry.ts";

const HTTP = { number: 80, name: "http", protocol: "HTTP" };
const RAW = { number: 9000, name: "raw" };

function registryOver(store: MemoryConfigStore, options: Partial<ServiceEntryRegistryOptions> = {}) {
  const registry = new ServiceEntryRegistry(store, {
    clusterId: "c1",
    appNamespaces: [],
    defaultExportTo: () => ["*"],
    log: silentLogger,
    ...options,
  });
  const events: string[] = [];
  registry.onServiceEvent((e) => events.push(`${e.type} ${e.service.namespace}/${e.service.hostname}`));
  registry.onEndpointEvent((e) => events.push(`eds ${e.namespace}/${e.hostname}`));
  registry.start();
  return { registry, events };
}

Deno.test("A WorkloadEntry event converts that workload only for the entries that select it", () => {
  const store = orderedStore();
  const conversions: string[] = [];
  const { events } = registryOver(store, {
    workloadInstances: (resource, services, workload, source) => {
      conversions.push(`${resource.meta.namespace}/${resource.meta.name} <- ${source.workloadName}`);
      return workloadInstances(resource, services, workload, source);
    },
  });
  const selecting = (ns: string, name: string, app: string) =>
    store.apply(networking<ServiceEntrySpec>("ServiceEntry", ns, name, {
      hosts: [`${name}.${ns}.example`],
      ports: [HTTP],
      resolution: "STATIC",
      workloadSelector: { labels: { app } },
    }));
  const workload = (ns: string, name: string, spec: WorkloadEntrySpec) =>
    store.apply(networking<WorkloadEntrySpec>("WorkloadEntry", ns, name, spec));
  selecting("a", "pick-x", "x");
  selecting("a", "pick-y", "y");
  selecting("b", "pick-x", "x");
  for (let i = 0; i < 5; i++) workload("a", `y-${i}`, { address: `10.0.0.${i}`, labels: { app: "y" } });
  conversions.length = 0;
  events.length = 0;

  workload("a", "new", { address: "10.0.1.1", labels: { app: "x" } });
  assert.deepEqual(conversions, ["a/pick-x <- new"]);
  assert.deepEqual(events, ["eds a/pick-x.a.example"]);

  conversions.length = 0;
  events.length = 0;
  workload("a", "new", { address: "10.0.1.1", labels: { app: "y" } });
  assert.deepEqual(conversions, ["a/pick-y <- new"], "the entry that lost it drops it without converting");
  assert.deepEqual(events, ["eds a/pick-x.a.example", "eds a/pick-y.a.example"]);

  conversions.length = 0;
  events.length = 0;
  store.delete("WorkloadEntry", "a", "new");
  workload("a", "unselected", { address: "10.0.1.2", labels: { app: "z" } });
  assert.deepEqual(conversions, []);
  assert.deepEqual(events, ["eds a/pick-y.a.example"]);
});

Deno.test("A WorkloadEntry change reads at most its neighbour's instances to update its service's list", () => {
  const store = orderedStore();
  // Instances that count every read of their service by the workload they belong to.
  const reads = new Map<string, number>();
  const { registry, events } = registryOver(store, {
    workloadInstances: (resource, services, workload, source) =>
      workloadInstances(resource, services, workload, source).map((instance) =>
        Object.freeze({
          get service() {
            reads.set(source.workloadName, (reads.get(source.workloadName) ?? 0) + 1);
            return instance.service;
          },
          servicePort: instance.servicePort,
          endpoint: instance.endpoint,
        })
      ),
  });
  store.apply(networking<ServiceEntrySpec>("ServiceEntry", "a", "pick", {
    hosts: ["h1.example", "h2.example"],
    ports: [HTTP, RAW],
    resolution: "STATIC",
    workloadSelector: { labels: { app: "x" } },
  }));
  const workload = (name: string, address: string) =>
    store.apply(networking<WorkloadEntrySpec>("WorkloadEntry", "a", name, { address, labels: { app: "x" } }));
  for (let i = 0; i < 200; i += 2) workload(`w-${String(i).padStart(3, "0")}`, `10.0.${i >> 8}.${i & 255}`);
  const addresses = () => registry.instances("h2.example", 9000).map((i) => i.endpoint.address);
  assert.equal(addresses().length, 100);

  for (
    const [change, write] of [
      ["added between two others", () => workload("w-101", "10.1.0.1")],
      ["added first", () => workload("w-", "10.1.0.2")],
      ["moved", () => workload("w-101", "10.1.0.3")],
      ["deleted", () => store.delete("WorkloadEntry", "a", "w-050")],
    ] as const
  ) {
    reads.clear();
    events.length = 0;
    write();
    assert.ok(addresses().length > 0);
    const others = [...reads.keys()].filter((name) => !["w-101", "w-", "w-050"].includes(name));
    // The neighbour tells where an added workload goes; a rebuild would read all 100.
    assert.ok(others.length <= 1, `workloads read when one was ${change}: ${others.join(", ")}`);
    assert.deepEqual(events, ["eds a/h1.example", "eds a/h2.example"], change);
    assert.deepEqual(
      view(registry),
      view(registryOver(store).registry),
      `the same as a registry rebuilt after one was ${change}`,
    );
  }
  assert.deepEqual(addresses().slice(0, 2), ["10.1.0.2", "10.0.0.0"]);
  assert.deepEqual(addresses().slice(50, 52), ["10.0.0.100", "10.1.0.3"]);
});

/** One write to the store: an entry or workload applied or deleted. */
type Op =
  | { op: "se"; ns: string; name: string; spec: ServiceEntrySpec }
  | { op: "we"; ns: string; name: string; spec: WorkloadEntrySpec }
  | { op: "delete"; kind: "ServiceEntry" | "WorkloadEntry"; ns: string; name: string };

const NAMESPACES = ["a", "b"];
const HOSTS = ["h1.example", "h2.example", "h3.example"];
const ADDRESSES = ["10.0.0.1", "10.0.0.2", "10.0.0.3"];
const ns = fc.constantFrom(...NAMESPACES);
const labels = fc.record({ app: fc.constantFrom("x", "y") }, { requiredKeys: [] });
const workloadSpec: fc.Arbitrary<WorkloadEntrySpec> = fc.record({
  address: fc.constantFrom(...ADDRESSES),
  labels,
  weight: fc.constantFrom(1, 2),
}, { requiredKeys: ["address"] });
const entrySpec: fc.Arbitrary<ServiceEntrySpec> = fc.record({
  hosts: fc.uniqueArray(fc.constantFrom(...HOSTS), { minLength: 1, maxLength: 2 }),
  ports: fc.constantFrom([HTTP], [HTTP, RAW], [RAW]),
  resolution: fc.constantFrom("STATIC", "DNS", "NONE"),
  endpoints: fc.array(workloadSpec, { maxLength: 2 }),
  workloadSelector: fc.record({
    labels: fc.constantFrom<Record<string, string>>({ app: "x" }, { app: "y" }, {}),
  }),
  exportTo: fc.constantFrom(["*"], ["."]),
}, { requiredKeys: ["hosts", "ports"] });
const operation: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("se" as const), ns, name: fc.constantFrom("s1", "s2", "s3"), spec: entrySpec }),
  fc.record({
    op: fc.constant("we" as const),
    ns,
    name: fc.constantFrom("w1", "w2", "w3", "w4", "w5"),
    spec: workloadSpec,
  }),
  fc.record({
    op: fc.constant("delete" as const),
    kind: fc.constantFrom("ServiceEntry" as const, "WorkloadEntry" as const),
    ns,
    name: fc.constantFrom("s1", "s2", "w1", "w2", "w4"),
  }),
);

function write(store: MemoryConfigStore, op: Op): void {
  if (op.op === "delete") store.delete(op.kind, op.ns, op.name);
  else if (op.op === "se") store.apply(networking("ServiceEntry", op.ns, op.name, op.spec));
  else store.apply(networking("WorkloadEntry", op.ns, op.name, op.spec));
}

/** A proxy at every address of the pool, in `namespace`. */
function everywhere(namespace: string) {
  return parseProxy({
    id: `sidecar~${ADDRESSES[0]}~pod.${namespace}~${namespace}.svc.cluster.local`,
    metadata: { INSTANCE_IPS: ADDRESSES.join(",") },
  });
}

/** Everything a reader of the registry can see. */
function view(registry: ServiceEntryRegistry) {
  return {
    services: registry.services(),
    byHost: HOSTS.map((h) => ({
      any: registry.getService(h),
      instances: registry.instances(h),
      port80: registry.instances(h, 80),
      perNamespace: NAMESPACES.map((n) => [registry.getService(h, n), registry.instances(h, undefined, n)]),
    })),
    proxies: NAMESPACES.flatMap((n) => [
      ...ADDRESSES.map((ip) => registry.proxyInstances(sidecar(ip, n))),
      registry.proxyInstances(everywhere(n)),
    ]),
  };
}

/** The events a change from `before` to `after` must produce: services that differ, endpoints that differ. */
function expectedEvents(before: ServiceEntryRegistry, after: ServiceEntryRegistry): string[] {
  const out: string[] = [];
  for (const n of NAMESPACES) {
    for (const h of HOSTS) {
      const key = `${n}/${h}`;
      const [was, is] = [before.getService(h, n), after.getService(h, n)];
      const type = serviceChange(was, is);
      if (type) out.push(`${type} ${key}`);
      if (!sameEndpoints(before.instances(h, undefined, n), after.instances(h, undefined, n))) {
        out.push(`eds ${key}`);
      }
    }
  }
  return out.sort();
}

function serviceChange(was: Service | undefined, is: Service | undefined): string | undefined {
  if (!was) return is ? "add" : undefined;
  if (!is) return "delete";
  try {
    assert.deepStrictEqual(was, is);
    return undefined;
  } catch {
    return "update";
  }
}

Deno.test("The ServiceEntry registry kept by events equals one rebuilt from the store, after any writes", () => {
  fc.assert(
    fc.property(fc.array(operation, { minLength: 1, maxLength: 25 }), (ops) => {
      const store = orderedStore();
      const { registry, events } = registryOver(store);
      let rebuilt = registryOver(store).registry;
      for (const op of ops) {
        events.length = 0;
        const previous = rebuilt;
        previous.stop();
        write(store, op);
        rebuilt = registryOver(store).registry;
        assert.deepStrictEqual(view(registry), view(rebuilt), `after ${JSON.stringify(op)}`);
        assert.deepStrictEqual(
          [...events].sort(),
          expectedEvents(previous, rebuilt),
          `events of ${JSON.stringify(op)}`,
        );
      }
    }),
    { numRuns: 300 },
  );
});

Deno.test("proxyInstances lists hosts in the order the oldest entry giving them instances names them", () => {
  const store = orderedStore();
  const { registry } = registryOver(store);
  store.apply(networking<ServiceEntrySpec>("ServiceEntry", "a", "old", {
    hosts: ["h1.example"],
    ports: [HTTP],
    resolution: "STATIC",
  }));
  store.apply(networking<ServiceEntrySpec>("ServiceEntry", "a", "new", {
    hosts: ["h2.example", "h1.example"],
    ports: [HTTP],
    resolution: "STATIC",
    endpoints: [{ address: "10.0.0.1" }],
  }));
  assert.deepEqual(
    registry.proxyInstances(sidecar("10.0.0.1", "a")).map((i) => i.service.hostname),
    ["h2.example", "h1.example"],
  );
});

Deno.test("The ServiceEntry registry hands out a service's instance list frozen as built", () => {
  const store = orderedStore();
  const { registry } = registryOver(store);
  store.apply(networking<ServiceEntrySpec>("ServiceEntry", "a", "inline", {
    hosts: ["h.example"],
    ports: [HTTP],
    resolution: "STATIC",
    endpoints: [{ address: "10.0.0.1" }, { address: "10.0.0.2" }],
  }));
  const built = registry.instances("h.example", undefined, "a");
  assert.deepEqual(built.map((i) => i.endpoint.address), ["10.0.0.1", "10.0.0.2"]);
  assert.ok(Object.isFrozen(built));
});
