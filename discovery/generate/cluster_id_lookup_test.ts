import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { NAME_TABLE_TYPE_URL } from "@mesh/proto/name_table";
import { parseProxy, type Proxy } from "../model/proxy.ts";
import { MemoryRegistry } from "../registry/memory_registry.ts";
import { service } from "../registry/_test_support.ts";
import { isCacheable } from "./generator.ts";
import { nameTableGenerator } from "./name_table.ts";
import { run, World } from "./_test_world.ts";
import { envoyGenerators } from "./envoy/envoy_generators.ts";

/** A TCP service that clusters c1 and c2 both define, with an address in each. */
function twoClusterWorld(): World {
  const world = new World();
  for (const [clusterId, address] of [["c1", "10.96.0.1"], ["c2", "10.97.0.1"]]) {
    const registry = new MemoryRegistry({ provider: "Orchestrator", clusterId });
    registry.addService(service("db.shop.svc.cluster.local", "shop", {
      addresses: [address],
      ports: [{ name: "tcp", port: 5432, protocol: "TCP" }],
      attributes: { serviceRegistry: "Orchestrator", clusterId, name: "db", namespace: "shop" },
    }));
    world.registry.addRegistry(registry);
  }
  return world;
}

function sidecarIn(clusterId: string): Proxy {
  return parseProxy({
    id: "sidecar~10.9.9.9~app.shop~shop.svc.cluster.local",
    metadata: { NAMESPACE: "shop", CLUSTER_ID: clusterId },
  });
}

/** The name table's addresses of the service, for `proxy`. */
function nameTableIps(proxy: Proxy, push: ReturnType<World["push"]>): string[] {
  const [resource] = nameTableGenerator(NAME_TABLE_TYPE_URL).generate(proxy, push, { names: [], full: true });
  assert.ok(isCacheable(resource));
  return (resource.build() as Record<string, { ips: string[] }>)["db.shop.svc.cluster.local"].ips;
}

const LDS = envoyGenerators().find((g) => g.typeUrl === TYPE_URL.listener)!;

Deno.test("A proxy's CLUSTER_ID picks that cluster's address of a service several clusters define", () => {
  const push = twoClusterWorld().push();
  assert.deepEqual(nameTableIps(sidecarIn("c2"), push), ["10.97.0.1"]);
  assert.ok(run(LDS, sidecarIn("c2"), push).names.includes("10.97.0.1_5432"));
});

Deno.test("A CLUSTER_ID that names a property every object has reads no address of it", () => {
  // Before: `constructor` read the Object function as the cluster's addresses, and LDS and the name table threw
  // "addresses.filter is not a function" for every request of any client that sent it.
  const push = twoClusterWorld().push();
  for (const clusterId of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
    const proxy = sidecarIn(clusterId);
    assert.deepEqual(nameTableIps(proxy, push), ["10.96.0.1"], `${clusterId}: the first registry's address`);
    assert.ok(run(LDS, proxy, push).names.includes("10.96.0.1_5432"), clusterId);
  }
});
