import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { connectChangeEvents } from "./change_events.ts";
import { EndpointIndex } from "./endpoint_index.ts";
import type { PushRequest } from "./push_request.ts";
import { networking, serviceEntry, world } from "./_test_support.ts";

function connected(headlessPodListeners = false) {
  const w = world();
  const requests: PushRequest[] = [];
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  const endpoints = new EndpointIndex(w.registry);
  const events = connectChangeEvents({
    store: w.store,
    registry: w.registry,
    endpoints,
    enqueue: (r) => void requests.push(r),
    metrics,
    headlessPodListeners,
  });
  const summary = () =>
    requests.splice(0).map((r) =>
      `${r.full ? "full" : "eds"} ${Object.keys(r.reasons).join(",")} ${
        [...r.configsUpdated ?? ["*"]].join(",")
      }`
    );
  return { w, events, endpoints, metrics, summary };
}

Deno.test("Config and registry events become push requests", async (t) => {
  const { w, events, endpoints, metrics, summary } = connected();

  await t.step("a routing config change is a full push of that config", () => {
    w.apply(networking("VirtualService", "ns", "vs", { hosts: ["a"], http: [] }));
    assert.deepEqual(summary(), ["full config VirtualService/ns/vs"]);
  });

  await t.step("a ServiceEntry becomes a service push, not a config push", () => {
    w.apply(serviceEntry("ns", "api", "api.example"));
    assert.deepEqual(summary(), ["full service ServiceEntry/ns/api.example"]);
    assert.equal(endpoints.shards("api.example", "ns").version, 1);
  });

  await t.step("a WorkloadEntry change is endpoint-only for the services selecting it", () => {
    w.apply(networking("ServiceEntry", "ns", "sel", {
      hosts: ["sel.example"],
      ports: [{ number: 80, name: "http", protocol: "HTTP" }],
      resolution: "STATIC",
      workloadSelector: { labels: { app: "sel" } },
    }));
    summary();
    w.apply(networking("WorkloadEntry", "ns", "w1", { address: "10.2.0.1", labels: { app: "sel" } }));
    assert.deepEqual(summary(), ["eds endpoint ServiceEntry/ns/sel.example"]);
    assert.deepEqual(
      [...endpoints.shards("sel.example", "ns").byCluster.get("c1")!].map((i) => i.endpoint.address),
      ["10.2.0.1"],
    );
  });

  await t.step("endpoint changes of a DNS service need a full push", () => {
    w.apply(networking("ServiceEntry", "ns", "dns", {
      hosts: ["dns.example"],
      ports: [{ number: 80, name: "http", protocol: "HTTP" }],
      resolution: "DNS",
      workloadSelector: { labels: { app: "dns" } },
    }));
    summary();
    w.apply(networking("WorkloadEntry", "ns", "w2", { address: "vm.example.net", labels: { app: "dns" } }));
    assert.deepEqual(summary(), ["full endpoint ServiceEntry/ns/dns.example"]);
  });

  await t.step("a WorkloadEntry nobody selects pushes nothing", () => {
    w.apply(networking("WorkloadEntry", "ns", "w3", { address: "10.2.0.3", labels: { app: "none" } }));
    w.apply(networking("WorkloadGroup", "ns", "g", { template: {} }));
    assert.deepEqual(summary(), []);
  });

  await t.step("a mesh config change is a global push of everything", () => {
    events.meshChanged();
    assert.deepEqual(summary(), ["full global *"]);
  });

  await t.step("a gateway credential change is a full push naming the secret", () => {
    events.secretChanged("ns", "shop-cert");
    assert.deepEqual(summary(), ["full secret Secret/ns/shop-cert"]);
  });

  await t.step("every event is counted in discovery_inbound_updates", async () => {
    w.store.delete("ServiceEntry", "ns", "api");
    assert.deepEqual(summary(), ["full service ServiceEntry/ns/api.example"]);
    const values = (await metrics.counter("discovery_inbound_updates").get()).values;
    const byType = Object.fromEntries(values.map((v) => [v.labels.type, v.value]));
    assert.deepEqual(byType, { config: 10, svc: 3, eds: 4, svcdelete: 1, secret: 1 });
  });

  await t.step("after close nothing is pushed", () => {
    events.close();
    w.apply(networking("VirtualService", "ns", "vs2", { hosts: ["b"], http: [] }));
    assert.deepEqual(summary(), []);
  });
});

Deno.test("EndpointIndex versions each service's endpoints", () => {
  const w = world();
  const index = new EndpointIndex(w.registry);
  assert.equal(index.shards("api.example", "ns").version, 0);
  w.apply(serviceEntry("ns", "api", "api.example"));
  assert.equal(index.update({ hostname: "api.example", namespace: "ns" }), true);
  assert.equal(
    index.update({ hostname: "api.example", namespace: "ns" }),
    false,
    "unchanged endpoints keep their version",
  );
  const v1 = index.shards("api.example", "ns");
  w.apply(serviceEntry("ns", "api", "api.example", undefined, "10.0.0.2"));
  assert.equal(index.update({ hostname: "api.example", namespace: "ns" }), true);
  const v2 = index.shards("api.example", "ns");
  assert.deepEqual([v1.version, v2.version], [1, 2]);
  assert.equal(v1.byCluster.get("c1")![0].endpoint.address, "10.0.0.1", "old shards stay as they were");
  assert.deepEqual(index.all().map((s) => s.hostname), ["api.example"]);
  w.store.delete("ServiceEntry", "ns", "api");
  index.update({ hostname: "api.example", namespace: "ns" });
  assert.deepEqual(index.all(), []);
  assert.equal(index.shards("api.example", "ns").version, 3);
});

Deno.test("Reading an EndpointIndex never reads the registries: only priming and events do", () => {
  const w = world();
  const index = new EndpointIndex(w.registry);
  w.apply(serviceEntry("ns", "api", "api.example"));
  const before = index.generation;
  assert.equal(index.shards("api.example", "ns").version, 0, "an unprimed service has no endpoints yet");
  assert.equal(index.generation, before, "and reading it changed nothing");
  index.prime([{ hostname: "api.example", namespace: "ns" }]);
  assert.equal(index.shards("api.example", "ns").version, 1);
  w.apply(serviceEntry("ns", "api", "api.example", undefined, "10.0.0.2"));
  index.prime([{ hostname: "api.example", namespace: "ns" }]);
  assert.equal(index.shards("api.example", "ns").version, 1, "priming reads only services it does not know");
  index.update({ hostname: "api.example", namespace: "ns" });
  assert.equal(index.shards("api.example", "ns").byCluster.get("c1")![0].endpoint.address, "10.0.0.2");
});

Deno.test("A push snapshot primes the endpoints of every service it lists, DNS ones included", () => {
  const w = world();
  w.apply(networking("ServiceEntry", "ns", "dns", {
    hosts: ["dns.example"],
    ports: [{ number: 80, name: "http", protocol: "HTTP" }],
    location: "MESH_EXTERNAL",
    resolution: "DNS",
    endpoints: [{ address: "backend.example" }],
  }));
  const push = w.push();
  const shards = push.endpointIndex.shards("dns.example", "ns");
  assert.equal(shards.version, 1);
  assert.equal(shards.byCluster.get("c1")![0].endpoint.address, "backend.example");
});

Deno.test("EndpointIndex finds the instances at a workload's addresses in all() order, and follows changes", () => {
  const w = world();
  const index = new EndpointIndex(w.registry);
  w.apply(serviceEntry("ns", "b", "b.example", undefined, "10.0.0.7"));
  w.apply(serviceEntry("ns", "a", "a.example", undefined, "10.0.0.7"));
  w.apply(serviceEntry("ns", "c", "c.example", undefined, "10.0.0.8"));
  index.prime(["a", "b", "c"].map((n) => ({ hostname: `${n}.example`, namespace: "ns" })));
  const hosts = (addresses: string[]) =>
    index.snapshot().instancesAt(addresses).map((i) => i.service.hostname);
  assert.deepEqual(hosts(["10.0.0.7"]), ["a.example", "b.example"]);
  assert.deepEqual(hosts(["10.0.0.8", "10.0.0.7"]), ["a.example", "b.example", "c.example"], "all() order");
  assert.deepEqual(hosts(["10.9.9.9"]), []);
  w.apply(serviceEntry("ns", "b", "b.example", undefined, "10.0.0.8"));
  index.update({ hostname: "b.example", namespace: "ns" });
  assert.deepEqual(hosts(["10.0.0.7"]), ["a.example"], "a moved endpoint is found at its new address");
  assert.deepEqual(hosts(["10.0.0.8"]), ["b.example", "c.example"]);
});

Deno.test("EndpointIndex primes a service without endpoints once, and still follows its events", () => {
  const w = world();
  w.apply(networking("ServiceEntry", "ns", "empty", {
    hosts: ["empty.example"],
    ports: [{ number: 80, name: "http", protocol: "HTTP" }],
    resolution: "STATIC",
  }));
  let reads = 0;
  const index = new EndpointIndex({
    services: () => w.registry.services(),
    getService: (hostname, namespace) => w.registry.getService(hostname, namespace),
    instances: (hostname, port, namespace) => {
      reads++;
      return w.registry.instances(hostname, port, namespace);
    },
    proxyInstances: (proxy) => w.registry.proxyInstances(proxy),
    hasSynced: () => w.registry.hasSynced(),
  });
  const service = { hostname: "empty.example", namespace: "ns" };
  index.prime([service]);
  index.prime([service]);
  assert.equal(reads, 1, "a second snapshot does not read the service again");
  assert.equal(index.shards("empty.example", "ns").version, 0);
  assert.deepEqual(index.all(), []);
  const generation = index.generation;
  w.apply(serviceEntry("ns", "empty", "empty.example", undefined, "10.0.0.9"));
  assert.equal(index.update(service), true);
  assert.equal(index.shards("empty.example", "ns").version, 1);
  assert.equal(index.generation, generation + 1);
});

Deno.test("With per-pod listeners, endpoint changes of a headless service are full pushes; without, EDS only", () => {
  const headless = networking("ServiceEntry", "ns", "db", {
    hosts: ["db.example"],
    ports: [{ number: 5432, name: "tcp", protocol: "TCP" }],
    resolution: "NONE",
    workloadSelector: { labels: { app: "db" } },
  });
  const pod = networking("WorkloadEntry", "ns", "db-0", { address: "10.2.0.9", labels: { app: "db" } });
  for (const [on, expected] of [[true, "full"], [false, "eds"]] as const) {
    const { w, summary } = connected(on);
    w.apply(headless);
    summary();
    w.apply(pod);
    assert.deepEqual(summary(), [`${expected} endpoint ServiceEntry/ns/db.example`]);
  }
});
