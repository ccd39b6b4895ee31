import assert from "node:assert/strict";
import { silentLogger } from "@mesh/shared/log/logger";
import type { ServiceEntrySpec } from "@mesh/shared/config/networking/service_entry";
import type { WorkloadEntrySpec } from "@mesh/shared/config/networking/workload_entry";
import { AggregateRegistry } from "../aggregate_registry.ts";
import type { EndpointEvent, ServiceEvent } from "../service_registry.ts";
import { networking, orderedStore, sidecar } from "../_test_support.ts";
import { ServiceEntryRegistry, type ServiceEntryRegistryOptions } from "./service_entry_registry.ts";
import type { SelectableWorkload, WorkloadSource } from "../workload_source.ts";

const se = (ns: string, name: string, spec: ServiceEntrySpec) => networking("ServiceEntry", ns, name, spec);
const we = (ns: string, name: string, spec: WorkloadEntrySpec) => networking("WorkloadEntry", ns, name, spec);

function setup(options: Partial<ServiceEntryRegistryOptions> = {}) {
  const store = orderedStore();
  const registry = new ServiceEntryRegistry(store, {
    clusterId: "c1",
    appNamespaces: [],
    defaultExportTo: () => ["*"],
    log: silentLogger,
    ...options,
  });
  const serviceEvents: string[] = [];
  const endpointEvents: EndpointEvent[] = [];
  registry.onServiceEvent((e: ServiceEvent) =>
    serviceEvents.push(`${e.type} ${e.service.namespace}/${e.service.hostname}`)
  );
  registry.onEndpointEvent((e) => endpointEvents.push(e));
  registry.start();
  return { store, registry, serviceEvents, endpointEvents };
}

const HTTP = { number: 80, name: "http", protocol: "HTTP" };

Deno.test("ServiceEntryRegistry converts ServiceEntries into services", async (t) => {
  const { store, registry, serviceEvents } = setup();
  store.apply(se("ext", "apis", {
    hosts: ["api.example.com", "*.example.org"],
    addresses: ["192.0.2.10/32", "198.51.100.0/24"],
    ports: [HTTP, { number: 9000, name: "raw" }],
    location: "MESH_EXTERNAL",
    resolution: "DNS",
    exportTo: [".", "shared"],
  }));

  await t.step("one service per host with every address, resolution and visibility", () => {
    const [org, api] = registry.services();
    assert.equal(api.hostname, "api.example.com");
    assert.equal(org.hostname, "*.example.org");
    assert.deepEqual(api.addresses, ["192.0.2.10", "198.51.100.0/24"]);
    assert.equal(api.resolution, "DNSLB");
    assert.equal(api.meshExternal, true);
    assert.deepEqual(api.exportTo, ["ext", "shared"]);
    assert.deepEqual(api.ports, [
      { name: "http", port: 80, protocol: "HTTP" },
      { name: "raw", port: 9000, protocol: "Unsupported" },
    ]);
    assert.deepEqual(api.attributes, {
      serviceRegistry: "External",
      clusterId: "c1",
      name: "apis",
      namespace: "ext",
    });
    assert.deepEqual(serviceEvents, ["add ext/*.example.org", "add ext/api.example.com"]);
  });

  await t.step("DNS resolution without endpoints resolves each host itself", () => {
    const instances = registry.instances("api.example.com");
    assert.deepEqual(
      instances.map((i) => [i.endpoint.address, i.endpoint.endpointPort, i.servicePort.name]),
      [
        ["api.example.com", 80, "http"],
        ["api.example.com", 9000, "raw"],
      ],
    );
    assert.equal(registry.instances("api.example.com", 9000).length, 1);
  });

  await t.step("resolution and location map as in Istio", () => {
    store.apply(se("ns", "none", { hosts: ["none.internal"], ports: [HTTP], location: "MESH_INTERNAL" }));
    store.apply(se("ns", "static", {
      hosts: ["static.internal"],
      ports: [HTTP],
      resolution: "STATIC",
      endpoints: [{ address: "10.0.0.1" }],
    }));
    assert.equal(registry.getService("none.internal")?.resolution, "Passthrough");
    assert.equal(registry.getService("none.internal")?.meshExternal, false);
    assert.equal(registry.getService("static.internal")?.resolution, "ClientSideLB");
    assert.equal(registry.getService("static.internal")?.meshExternal, true);
    assert.deepEqual(registry.getService("none.internal")?.exportTo, ["*"]);
  });

  await t.step("deleting the entry deletes its services", () => {
    serviceEvents.length = 0;
    store.delete("ServiceEntry", "ext", "apis");
    assert.deepEqual(serviceEvents, ["delete ext/*.example.org", "delete ext/api.example.com"]);
    assert.equal(registry.getService("api.example.com"), undefined);
  });
});

Deno.test("ServiceEntryRegistry builds endpoints from inline entries", () => {
  const { store, registry } = setup();
  store.apply(se("ns", "db", {
    hosts: ["db.internal"],
    ports: [{ number: 5432, name: "tcp-pg", protocol: "TCP", targetPort: 15432 }, HTTP],
    resolution: "STATIC",
    endpoints: [
      {
        address: "10.0.0.1",
        ports: { "tcp-pg": 6000 },
        labels: { version: "v1", "security.istio.io/tlsMode": "istio" },
        network: "n1",
        locality: "r1/z1",
        weight: 3,
        serviceAccount: "db",
      },
      { address: "unix:///var/run/db.sock" },
    ],
  }));
  const ports = registry.instances("db.internal").map((
    i,
  ) => [i.endpoint.address, i.servicePort.port, i.endpoint.endpointPort]);
  assert.deepEqual(ports, [
    ["10.0.0.1", 5432, 6000],
    ["10.0.0.1", 80, 80],
    ["unix:///var/run/db.sock", 5432, 0],
    ["unix:///var/run/db.sock", 80, 0],
  ]);
  const first = registry.instances("db.internal", 5432)[0].endpoint;
  assert.deepEqual(first, {
    address: "10.0.0.1",
    endpointPort: 6000,
    servicePortName: "tcp-pg",
    labels: { version: "v1", "security.istio.io/tlsMode": "istio" },
    locality: { label: "r1/z1", clusterId: "c1" },
    network: "n1",
    weight: 3,
    tlsMode: "mesh",
    serviceAccount: "db",
    namespace: "ns",
    workloadName: "",
    healthy: true,
  });
  // Without a name in the endpoint's ports, the targetPort is used.
  store.apply(se("ns", "db", {
    hosts: ["db.internal"],
    ports: [{ number: 5432, name: "tcp-pg", protocol: "TCP", targetPort: 15432 }],
    resolution: "STATIC",
    endpoints: [{ address: "10.0.0.1" }],
  }));
  assert.equal(registry.instances("db.internal")[0].endpoint.endpointPort, 15432);
});

Deno.test("ServiceEntryRegistry selects WorkloadEntries by workloadSelector", async (t) => {
  const { store, registry, serviceEvents, endpointEvents } = setup();
  store.apply(
    we("vm", "vm-1", { address: "10.1.0.1", labels: { app: "reviews" }, serviceAccount: "reviews" }),
  );
  store.apply(we("other", "vm-x", { address: "10.1.0.9", labels: { app: "reviews" } }));
  store.apply(se("vm", "reviews", {
    hosts: ["reviews.vm.svc.cluster.local"],
    ports: [HTTP],
    location: "MESH_INTERNAL",
    resolution: "STATIC",
    workloadSelector: { labels: { app: "reviews" } },
  }));
  const addresses = () => registry.instances("reviews.vm.svc.cluster.local").map((i) => i.endpoint.address);

  await t.step("only workloads of the entry's namespace with matching labels are endpoints", () => {
    assert.deepEqual(addresses(), ["10.1.0.1"]);
    const ep = registry.instances("reviews.vm.svc.cluster.local")[0].endpoint;
    assert.equal(ep.workloadName, "vm-1");
    assert.equal(ep.serviceAccount, "reviews");
    assert.deepEqual(registry.workloads().map((w) => `${w.namespace}/${w.name}`), ["other/vm-x", "vm/vm-1"]);
  });

  await t.step("a new matching WorkloadEntry changes endpoints only", () => {
    serviceEvents.length = 0;
    endpointEvents.length = 0;
    store.apply(we("vm", "vm-2", { address: "10.1.0.2", labels: { app: "reviews" } }));
    assert.deepEqual(addresses(), ["10.1.0.1", "10.1.0.2"]);
    assert.deepEqual(serviceEvents, []);
    assert.deepEqual(endpointEvents, [{
      namespace: "vm",
      hostname: "reviews.vm.svc.cluster.local",
      clusterId: "c1",
    }]);
  });

  await t.step("a WorkloadEntry whose labels stop matching is dropped", () => {
    endpointEvents.length = 0;
    store.apply(we("vm", "vm-2", { address: "10.1.0.2", labels: { app: "ratings" } }));
    assert.deepEqual(addresses(), ["10.1.0.1"]);
    assert.equal(endpointEvents.length, 1);
  });

  await t.step("an unrelated WorkloadEntry causes no event", () => {
    endpointEvents.length = 0;
    store.apply(we("vm", "vm-3", { address: "10.1.0.3", labels: { app: "ratings" } }));
    store.delete("WorkloadEntry", "other", "vm-x");
    assert.deepEqual(endpointEvents, []);
  });

  await t.step("the proxy at a workload's address sees instances of its own namespace only", () => {
    assert.equal(registry.proxyInstances(sidecar("10.1.0.1", "vm")).length, 1);
    assert.equal(registry.proxyInstances(sidecar("10.1.0.1", "elsewhere")).length, 0);
  });

  await t.step("deleting the WorkloadEntry removes the endpoint", () => {
    store.delete("WorkloadEntry", "vm", "vm-1");
    assert.deepEqual(addresses(), []);
  });
});

Deno.test("ServiceEntryRegistry honours --appNamespace, startup state and mesh defaults", async (t) => {
  await t.step("resources outside the app namespaces are ignored", () => {
    const { store, registry } = setup({ appNamespaces: ["apps"] });
    store.apply(se("apps", "a", { hosts: ["a.example.com"], ports: [HTTP] }));
    store.apply(se("other", "b", { hosts: ["b.example.com"], ports: [HTTP] }));
    assert.deepEqual(registry.services().map((s) => s.hostname), ["a.example.com"]);
  });

  await t.step("entries present before start are loaded, and sync follows the store", () => {
    const store = orderedStore();
    store.apply(se("ns", "a", { hosts: ["a.example.com"], ports: [HTTP] }));
    const registry = new ServiceEntryRegistry(store, {
      clusterId: "c1",
      appNamespaces: [],
      defaultExportTo: () => ["."],
      log: silentLogger,
    });
    assert.equal(registry.hasSynced(), false);
    registry.start();
    assert.equal(registry.hasSynced(), false);
    store.markSynced();
    assert.equal(registry.hasSynced(), true);
    assert.deepEqual(registry.getService("a.example.com")?.exportTo, ["ns"]);
    registry.stop();
    store.apply(se("ns", "b", { hosts: ["b.example.com"], ports: [HTTP] }));
    assert.equal(registry.getService("b.example.com"), undefined);
  });
});

Deno.test("ServiceEntryRegistry keeps duplicate hosts, oldest entry first", () => {
  const { store, registry } = setup();
  store.apply(
    se("ns", "newer-but-first-by-name", {
      hosts: ["dup.example.com"],
      ports: [HTTP],
      resolution: "STATIC",
      endpoints: [{ address: "10.0.0.1" }],
    }),
  );
  store.apply(
    se("ns", "a-second", {
      hosts: ["dup.example.com"],
      ports: [{ number: 81, name: "http2", protocol: "HTTP" }],
      resolution: "STATIC",
      endpoints: [{ address: "10.0.0.2" }],
    }),
  );
  const dups = registry.services().filter((s) => s.hostname === "dup.example.com");
  assert.deepEqual(dups.map((s) => s.attributes.name), ["newer-but-first-by-name", "a-second"]);
  assert.equal(registry.getService("dup.example.com")?.attributes.name, "newer-but-first-by-name");
  assert.deepEqual(registry.instances("dup.example.com").map((i) => i.endpoint.address), [
    "10.0.0.1",
    "10.0.0.2",
  ]);
  const aggregate = new AggregateRegistry("c1");
  aggregate.addRegistry(registry);
  assert.equal(aggregate.services().length, 2);
});

Deno.test("ServiceEntryRegistry selects orchestrator pods too, following their changes as endpoint events", () => {
  let pods: SelectableWorkload[] = [
    {
      name: "reviews-1",
      namespace: "shop",
      spec: { address: "10.2.0.1", labels: { app: "reviews" }, serviceAccount: "reviews" },
    },
    { name: "other-1", namespace: "shop", spec: { address: "10.2.0.9", labels: { app: "other" } } },
  ];
  const listeners = new Set<(namespace: string) => void>();
  const source: WorkloadSource = {
    workloads: (namespace) => pods.filter((p) => p.namespace === namespace),
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const { store, registry, serviceEvents, endpointEvents } = setup({ pods: source });
  store.apply(we("shop", "vm-1", { address: "10.1.0.1", labels: { app: "reviews" } }));
  store.apply(se("shop", "reviews", {
    hosts: ["reviews.shop.svc.cluster.local"],
    ports: [HTTP],
    location: "MESH_INTERNAL",
    resolution: "STATIC",
    workloadSelector: { labels: { app: "reviews" } },
  }));
  const endpoints = () =>
    registry.instances("reviews.shop.svc.cluster.local").map((i) =>
      `${i.endpoint.address} ${i.endpoint.workloadName}`
    );
  assert.deepEqual(endpoints(), ["10.1.0.1 vm-1", "10.2.0.1 reviews-1"]);
  assert.equal(registry.instances("reviews.shop.svc.cluster.local")[1].endpoint.serviceAccount, "reviews");

  serviceEvents.length = 0;
  endpointEvents.length = 0;
  pods = [...pods, {
    name: "reviews-2",
    namespace: "shop",
    spec: { address: "10.2.0.2", labels: { app: "reviews" } },
  }];
  for (const listener of listeners) listener("shop");
  assert.deepEqual(endpoints(), ["10.1.0.1 vm-1", "10.2.0.1 reviews-1", "10.2.0.2 reviews-2"]);
  assert.deepEqual(serviceEvents, [], "a pod change is no service change");
  assert.equal(endpointEvents.length, 1);

  for (const listener of listeners) listener("shop");
  assert.equal(endpointEvents.length, 1, "news of a namespace whose pods did not change emits nothing");
  registry.stop();
  assert.equal(listeners.size, 0, "stopping unsubscribes");
});

Deno.test("ServiceEntryRegistry lends its WorkloadEntries by namespace and announces their changes", () => {
  const { store, registry } = setup();
  const news: string[] = [];
  registry.workloadEntries.onChange((namespace) => news.push(namespace));
  store.apply(we("vm", "vm-1", { address: "10.1.0.1", labels: { app: "reviews" } }));
  store.apply(we("other", "vm-x", { address: "10.1.0.9" }));
  store.apply(se("vm", "reviews", { hosts: ["r.example"], ports: [HTTP], resolution: "STATIC" }));
  assert.deepEqual(registry.workloadEntries.workloads("vm").map((w) => w.name), ["vm-1"]);
  assert.deepEqual(news, ["vm", "other"], "WorkloadEntry changes only");
});
