import assert from "node:assert/strict";
import {
  decodeNameTableAny,
  ISTIO_NAME_TABLE_TYPE_URL,
  NAME_TABLE_TYPE_URL,
  type NameTable,
} from "@mesh/proto/name_table";
import { parseProxy, type Proxy } from "../model/proxy.ts";
import { MemoryRegistry } from "../registry/memory_registry.ts";
import { endpoint, service } from "../registry/_test_support.ts";
import type { PushContext } from "../push/push_context.ts";
import { isCacheable } from "./generator.ts";
import { allocateAddresses, nameTableGenerator } from "./name_table.ts";
import { networking, World } from "./_test_world.ts";

function sidecar(namespace: string, meta: Record<string, string> = {}): Proxy {
  return parseProxy({
    id: `sidecar~10.9.9.9~app.${namespace}~${namespace}.svc.cluster.local`,
    metadata: { NAMESPACE: namespace, CLUSTER_ID: "c1", ...meta },
  });
}

const CAPTURE = { DNS_CAPTURE: "true", DNS_AUTO_ALLOCATE: "true" };

function tableOf(proxy: Proxy, push: PushContext, typeUrl = NAME_TABLE_TYPE_URL): NameTable {
  const generated = nameTableGenerator(typeUrl).generate(proxy, push, { names: [], full: true });
  assert.equal(generated.length, 1);
  const [resource] = generated;
  assert.ok(isCacheable(resource) && resource.encode !== undefined);
  return decodeNameTableAny(resource.encode(undefined as never));
}

function externalEntry(namespace: string, name: string, hosts: string[], addresses: string[] = []) {
  return networking("ServiceEntry", namespace, name, {
    hosts,
    ...(addresses.length > 0 ? { addresses } : {}),
    location: "MESH_EXTERNAL",
    resolution: "DNS",
    ports: [{ number: 443, name: "tls", protocol: "TLS" }],
  });
}

/** A world with an orchestrator registry beside the ServiceEntries. */
function world(): { world: World; orch: MemoryRegistry } {
  const w = new World();
  const orch = new MemoryRegistry({ provider: "Orchestrator", clusterId: "c1" });
  w.registry.addRegistry(orch);
  return { world: w, orch };
}

Deno.test("the name table holds ServiceEntry addresses, cluster IPs and a headless service's pods", () => {
  const { world: w, orch } = world();
  w.apply(externalEntry("shop", "db", ["db.example.com"], ["10.20.0.1"]));
  const orchAttrs = (name: string, namespace: string) => ({
    serviceRegistry: "Orchestrator" as const,
    clusterId: "c1",
    name,
    namespace,
  });
  orch.addService(service("web.shop.svc.cluster.local", "shop", {
    addresses: ["10.96.0.7"],
    attributes: orchAttrs("web", "shop"),
  }));
  orch.addService(service("cache.shop.svc.cluster.local", "shop", {
    resolution: "Passthrough",
    attributes: orchAttrs("cache", "shop"),
  }));
  orch.setEndpoints("cache.shop.svc.cluster.local", "shop", [endpoint("10.1.0.2"), endpoint("10.1.0.1")]);
  const table = tableOf(sidecar("shop"), w.push());
  assert.deepEqual(table["db.example.com"], {
    ips: ["10.20.0.1"],
    registry: "External",
    shortname: "",
    namespace: "",
  });
  assert.deepEqual(table["web.shop.svc.cluster.local"], {
    ips: ["10.96.0.7"],
    registry: "Orchestrator",
    shortname: "web",
    namespace: "shop",
  });
  assert.deepEqual(table["cache.shop.svc.cluster.local"].ips, ["10.1.0.1", "10.1.0.2"]);
  // Istio's agent reads the orchestrator registry as "Kubernetes".
  const istio = tableOf(sidecar("shop"), w.push(), ISTIO_NAME_TABLE_TYPE_URL);
  assert.equal(istio["web.shop.svc.cluster.local"].registry, "Kubernetes");
});

Deno.test("the name table holds only the hosts of the proxy's Sidecar scope", () => {
  const { world: w } = world();
  w.apply(
    externalEntry("a", "one", ["one.example.com"], ["10.20.0.1"]),
    externalEntry("b", "two", ["two.example.com"], ["10.20.0.2"]),
    networking("Sidecar", "a", "default", { egress: [{ hosts: ["./*"] }] }),
  );
  const push = w.push();
  assert.deepEqual(Object.keys(tableOf(sidecar("a"), push)), ["one.example.com"]);
  assert.deepEqual(Object.keys(tableOf(sidecar("b"), push)).sort(), ["one.example.com", "two.example.com"]);
});

Deno.test("a ServiceEntry without an address gets one from 240.240.0.0/16 only with DNS capture and auto-allocation", () => {
  const { world: w } = world();
  w.apply(externalEntry("shop", "api", ["api.example.com"]), externalEntry("shop", "any", ["*.example.org"]));
  const push = w.push();
  assert.deepEqual(tableOf(sidecar("shop"), push), {});
  assert.deepEqual(tableOf(sidecar("shop", { DNS_CAPTURE: "true" }), push), {});
  const table = tableOf(sidecar("shop", CAPTURE), push);
  assert.deepEqual(Object.keys(table), ["api.example.com"]);
  assert.match(table["api.example.com"].ips[0], /^240\.240\.\d{1,3}\.\d{1,3}$/);
});

Deno.test("auto-allocated addresses stay the same across pushes, and when other ServiceEntries come and go", () => {
  const { world: w } = world();
  w.apply(
    externalEntry("shop", "api", ["api.example.com"]),
    externalEntry("shop", "pay", ["pay.example.com"]),
  );
  const first = tableOf(sidecar("shop", CAPTURE), w.push());
  assert.notEqual(first["api.example.com"].ips[0], first["pay.example.com"].ips[0]);
  w.apply(externalEntry("shop", "aaa", ["aaa.example.com"]));
  const second = tableOf(sidecar("shop", CAPTURE), w.push());
  assert.deepEqual(second["api.example.com"], first["api.example.com"]);
  assert.deepEqual(second["pay.example.com"], first["pay.example.com"]);
  w.delete("ServiceEntry", "shop", "pay");
  assert.deepEqual(tableOf(sidecar("shop", CAPTURE), w.push())["api.example.com"], first["api.example.com"]);
});

Deno.test("colliding hosts get distinct auto-allocated addresses, decided in hostname order", () => {
  const hosts = Array.from({ length: 3000 }, (_, i) => `h${i}.example.com`);
  const services = hosts.map((h) =>
    service(h, "shop", {
      attributes: { serviceRegistry: "External", clusterId: "c1", name: h, namespace: "shop" },
    })
  );
  const allocated = allocateAddresses(services);
  assert.equal(new Set(allocated.values()).size, hosts.length);
  assert.deepEqual(allocateAddresses([...services].reverse()), allocated);
  for (const address of allocated.values()) {
    const [, , third, fourth] = address.split(".").map(Number);
    assert.ok(third >= 0 && third <= 255 && fourth >= 1 && fourth <= 254, address);
  }
});

Deno.test("a router gets no name table, and equal tables share one cache key", () => {
  const { world: w } = world();
  w.apply(externalEntry("shop", "db", ["db.example.com"], ["10.20.0.1"]));
  const push = w.push();
  const generator = nameTableGenerator(NAME_TABLE_TYPE_URL);
  const router = parseProxy({ id: "router~10.9.9.8~gw.shop~shop.svc.cluster.local", metadata: {} });
  assert.deepEqual(generator.generate(router, push, { names: [], full: true }), []);
  const key = (proxy: Proxy, p: PushContext) => {
    const [resource] = generator.generate(proxy, p, { names: [], full: true });
    assert.ok(isCacheable(resource));
    return resource.key.id;
  };
  assert.equal(key(sidecar("shop"), push), key(sidecar("other"), w.push()));
  w.apply(externalEntry("shop", "db", ["db.example.com"], ["10.20.0.9"]));
  assert.notEqual(key(sidecar("shop"), push), key(sidecar("shop"), w.push()));
});
