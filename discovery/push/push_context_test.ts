import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import type { Resource } from "@mesh/shared/config/resource";
import {
  MESH,
  namespaceViewCases,
  networking,
  ordinaryMesh,
  proxyIn,
  serviceEntry,
  world,
} from "./_test_support.ts";
import { MemoryRegistry } from "../registry/memory_registry.ts";
import { defaultSidecarScope } from "./sidecar_scope.ts";

const hosts = (services: readonly { hostname: string; namespace: string }[]) =>
  services.map((s) => `${s.namespace}/${s.hostname}`);

Deno.test("PushContext shows each namespace the services exported to it", async (t) => {
  const w = world();
  w.apply(
    serviceEntry("a", "public", "public.a.example", ["*"]),
    serviceEntry("a", "private", "private.a.example", ["."]),
    serviceEntry("a", "hidden", "hidden.a.example", ["~"]),
    serviceEntry("a", "to-b", "to-b.a.example", ["b"]),
  );
  const push = w.push();

  await t.step("own namespace sees public and private, never hidden", () => {
    assert.deepEqual(hosts(push.servicesVisibleTo(proxyIn("a"))), [
      "a/private.a.example",
      "a/public.a.example",
    ]);
  });

  await t.step("a named namespace sees what is exported to it", () => {
    assert.deepEqual(hosts(push.servicesVisibleTo(proxyIn("b"))), ["a/public.a.example", "a/to-b.a.example"]);
    assert.deepEqual(hosts(push.servicesVisibleTo(proxyIn("c"))), ["a/public.a.example"]);
  });

  await t.step("a hostname defined in two namespaces resolves to the proxy's own first", () => {
    const w2 = world();
    w2.apply(serviceEntry("x", "svc", "shared.example"), serviceEntry("y", "svc", "shared.example"));
    const p = w2.push();
    assert.equal(p.serviceForHostname(proxyIn("y"), "shared.example")?.namespace, "y");
    assert.equal(p.serviceForHostname(proxyIn("z"), "shared.example")?.namespace, "x");
    assert.deepEqual(hosts(p.servicesVisibleTo(proxyIn("y"))), ["y/shared.example"]);
    assert.equal(p.services().length, 2);
  });
});

Deno.test("PushContext records snapshot problems and exports them as metrics", async (t) => {
  const w = world();
  w.apply(
    serviceEntry("ns", "first", "dup.example"),
    serviceEntry("ns", "second", "dup.example"),
    networking("ServiceEntry", "ns", "empty", {
      hosts: ["empty.example"],
      ports: [{ number: 80, name: "http", protocol: "HTTP" }],
      resolution: "STATIC",
      location: "MESH_INTERNAL",
    }),
    networking("ServiceEntry", "ns", "dns", {
      hosts: ["dns.example"],
      ports: [{ number: 443, name: "tls", protocol: "TLS" }],
      resolution: "DNS",
    }),
    networking("VirtualService", "ns", "vs", { hosts: ["dup.example"], http: [] }),
  );
  const push = w.push({ version: "v1" });

  await t.step("a second entry for one host in one namespace is a duplicate cluster", () => {
    assert.deepEqual(push.problems.keys("discovery_duplicate_proxy_clusters"), ["outbound|80||dup.example"]);
    assert.equal(push.serviceForHostname(proxyIn("ns"), "dup.example")?.attributes.name, "first");
  });

  await t.step("load-balanced services without endpoints are reported, DNS ones are not", () => {
    assert.deepEqual(push.problems.keys("discovery_eds_no_instances"), ["outbound|80||empty.example"]);
  });

  await t.step("pushStatus lists counts and problems", () => {
    const status = push.pushStatus();
    assert.equal(status.version, "v1");
    assert.equal(status.discovery_services, 3);
    assert.equal(status.discovery_virt_services, 1);
    assert.deepEqual(Object.keys(status.discovery_eds_no_instances as object), [
      "outbound|80||empty.example",
    ]);
    assert.match(
      (status.discovery_duplicate_proxy_clusters as Record<string, { message: string }>)[
        "outbound|80||dup.example"
      ]
        .message,
      /defined by "first" and "second"; "first" is used/,
    );
  });

  await t.step("the gauges follow the latest snapshot", async () => {
    const metrics = new Metrics("discovery", { version: "t", tag: "t" });
    push.problems.record(metrics);
    metrics.gauge("discovery_services").set(push.services().length);
    const text = await metrics.render();
    assert.match(text, /discovery_eds_no_instances\{cluster="outbound\|80\|\|empty.example"\} 1/);
    assert.match(text, /discovery_duplicate_proxy_clusters\{cluster="outbound\|80\|\|dup.example"\} 1/);
    w.store.delete("ServiceEntry", "ns", "second");
    w.store.delete("ServiceEntry", "ns", "empty");
    w.push().problems.record(metrics);
    const after = await metrics.render();
    assert.doesNotMatch(after, /empty.example/);
    assert.doesNotMatch(after, /discovery_duplicate_proxy_clusters\{/);
  });

  await t.step("the snapshot is frozen and ignores later changes", () => {
    assert.ok(Object.isFrozen(push));
    w.apply(serviceEntry("ns", "later", "later.example"));
    assert.equal(push.serviceForHostname(proxyIn("ns"), "later.example"), undefined);
    assert.throws(() => push.problems.add("discovery_eds_no_instances", "x", "y"), TypeError);
  });
});

Deno.test("PushContext captures every config kind at build time", () => {
  const w = world();
  w.apply(networking("EnvoyFilter", "ns", "ef", { configPatches: [] }));
  const push = w.push();
  w.apply(networking("EnvoyFilter", "ns", "ef2", { configPatches: [] }));
  assert.deepEqual(push.configs("EnvoyFilter").map((r) => r.meta.name), ["ef"]);
  assert.deepEqual(push.configs("Unknown"), []);
  assert.equal(push.mesh.rootNamespace, MESH.rootNamespace);
});

Deno.test("PushContext counts endpoints that are not ready in discovery_endpoint_not_ready", async () => {
  const w = world();
  const orch = new MemoryRegistry({ provider: "Orchestrator", clusterId: "c1" });
  w.registry.addRegistry(orch);
  orch.addService({
    hostname: "api.ns.svc.cluster.local",
    namespace: "ns",
    addresses: ["10.96.0.1"],
    ports: [{ name: "http", port: 80, protocol: "HTTP" }],
    resolution: "ClientSideLB",
    meshExternal: false,
    labels: {},
    exportTo: ["*"],
    serviceAccounts: [],
    attributes: {
      name: "api",
      namespace: "ns",
      serviceRegistry: "Orchestrator",
      clusterId: "c1",
      labelSelectors: {},
    },
  } as never);
  const endpoint = (address: string, healthy: boolean) => ({
    address,
    endpointPort: 8080,
    servicePortName: "http",
    labels: {},
    locality: { label: "", clusterId: "c1" },
    network: "",
    weight: 1,
    tlsMode: "disabled",
    serviceAccount: "",
    namespace: "ns",
    workloadName: "",
    healthy,
  });
  orch.setEndpoints(
    "api.ns.svc.cluster.local",
    "ns",
    [endpoint("10.1.0.1", true), endpoint("10.1.0.2", false)] as never,
  );
  const push = w.push();
  assert.deepEqual(push.problems.keys("discovery_endpoint_not_ready"), ["10.1.0.2:8080"]);
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  push.problems.record(metrics);
  assert.match(await metrics.render(), /^discovery_endpoint_not_ready 1$/m);
});

/** The view of each namespace in `namespaces` after applying `resources`. */
function views(resources: readonly Resource[], namespaces: readonly string[]): Record<string, string> {
  const w = world();
  w.apply(...resources);
  const push = w.push();
  return Object.fromEntries(namespaces.map((ns) => [ns, push.namespaceView(ns)]));
}

Deno.test("Namespaces whose own rules name only their own hosts, exported everywhere, share one view", () => {
  assert.deepEqual(views(ordinaryMesh(), ["a", "b", "c", "unnamed"]), { a: "", b: "", c: "", unnamed: "" });
});

Deno.test("A namespace is seen alone when something in the snapshot treats it differently", async (t) => {
  for (const { what, resources, alone } of namespaceViewCases()) {
    await t.step(what, () => {
      const expected = Object.fromEntries(
        ["a", "b", "c", "unnamed"].map((ns) => [ns, alone.includes(ns) ? ns : ""]),
      );
      assert.deepEqual(views([...ordinaryMesh(), ...resources], ["a", "b", "c", "unnamed"]), expected);
    });
  }
});

Deno.test("The root namespace's own DestinationRules do not single out any namespace", () => {
  const rule = networking("DestinationRule", MESH.rootNamespace, "mesh-wide", { host: "*.cluster.local" });
  assert.deepEqual(views([...ordinaryMesh(), rule], ["a", MESH.rootNamespace]), {
    a: "",
    [MESH.rootNamespace]: "",
  });
});

Deno.test("Namespaces that share a view share one default Sidecar scope, each seeing what it would alone", async (t) => {
  const namespaces = ["a", "b", "c", "unnamed"];
  const cases = [{ what: "an ordinary mesh", resources: [] as Resource[] }, ...namespaceViewCases()];
  for (const { what, resources } of cases) {
    await t.step(what, () => {
      const w = world();
      w.apply(...ordinaryMesh(), ...resources);
      const push = w.push();
      const shared = new Set<unknown>();
      for (const ns of namespaces) {
        const scope = push.sidecarScope(proxyIn(ns));
        if (scope.sidecar) continue;
        const alone = defaultSidecarScope(ns, {
          services: push.serviceIndex.visibleFrom(ns),
          virtualServices: push.virtualServiceIndex.forGateway("mesh", ns),
          meshOutboundMode: push.mesh.outboundTrafficPolicy.mode ?? "ALLOW_ANY",
        });
        assert.deepEqual(scope, alone, `namespace ${ns}`);
        for (const service of push.servicesVisibleTo(proxyIn(ns))) {
          assert.equal(push.serviceForHostname(proxyIn(ns), service.hostname), service);
        }
        if (push.namespaceView(ns) === "") shared.add(scope.services);
      }
      assert.ok(shared.size <= 1, "namespaces of the shared view hold one list of services");
    });
  }
});
