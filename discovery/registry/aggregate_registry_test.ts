import assert from "node:assert/strict";
import { AggregateRegistry, DuplicateRegistryError } from "./aggregate_registry.ts";
import { MemoryRegistry } from "./memory_registry.ts";
import type { ServiceEvent } from "./service_registry.ts";
import { endpoint, service, sidecar } from "./_test_support.ts";

function twoClusters() {
  const first = new MemoryRegistry({ provider: "Mock", clusterId: "c1" });
  const second = new MemoryRegistry({ provider: "Orchestrator", clusterId: "c2", synced: false });
  const aggregate = new AggregateRegistry("c1");
  aggregate.addRegistry(first);
  aggregate.addRegistry(second);
  return { first, second, aggregate };
}

Deno.test("AggregateRegistry merges registries by hostname with precedence", async (t) => {
  const { first, second, aggregate } = twoClusters();
  first.addService(service("a.ns.svc.cluster.local", "ns", { addresses: ["10.96.0.1"] }));
  second.addService(
    service("a.ns.svc.cluster.local", "ns", { addresses: ["10.97.0.1"], labels: { from: "c2" } }),
  );
  second.addService(service("b.ns.svc.cluster.local", "ns"));
  second.addService(service("a.ns.svc.cluster.local", "other"));

  await t.step("the first registry's service wins and carries every cluster's addresses", () => {
    const merged = aggregate.services().filter((s) => s.hostname === "a.ns.svc.cluster.local");
    assert.deepEqual(merged.map((s) => s.namespace), ["ns", "other"]);
    assert.deepEqual(merged[0].labels, {});
    assert.deepEqual(merged[0].clusterAddresses, { c1: ["10.96.0.1"], c2: ["10.97.0.1"] });
    assert.equal(merged[1].clusterAddresses, undefined);
    assert.equal(aggregate.getService("a.ns.svc.cluster.local", "ns")?.attributes.serviceRegistry, "Mock");
    assert.equal(aggregate.getService("b.ns.svc.cluster.local")?.hostname, "b.ns.svc.cluster.local");
  });

  await t.step("instances are the union over clusters, each keeping its cluster id", () => {
    first.setEndpoints("a.ns.svc.cluster.local", "ns", [endpoint("10.0.0.1")]);
    second.setEndpoints("a.ns.svc.cluster.local", "ns", [endpoint("10.1.0.1")]);
    const instances = aggregate.instances("a.ns.svc.cluster.local", 80, "ns");
    assert.deepEqual(instances.map((i) => [i.endpoint.address, i.endpoint.locality.clusterId]), [
      ["10.0.0.1", "c1"],
      ["10.1.0.1", "c2"],
    ]);
    assert.equal(aggregate.proxyInstances(sidecar("10.1.0.1", "ns")).length, 1);
  });

  await t.step("synced only when every registry is, naming the ones that are not", () => {
    assert.equal(aggregate.hasSynced(), false);
    assert.deepEqual(aggregate.unsyncedRegistries(), ["Orchestrator/c2"]);
    second.setSynced(true);
    assert.equal(aggregate.hasSynced(), true);
  });

  await t.step("the same provider and cluster cannot be added twice", () => {
    assert.throws(
      () => aggregate.addRegistry(new MemoryRegistry({ provider: "Mock", clusterId: "c1" })),
      DuplicateRegistryError,
    );
  });
});

Deno.test("AggregateRegistry forwards events and stops after removal", () => {
  const { first, second, aggregate } = twoClusters();
  const events: ServiceEvent[] = [];
  let endpointEvents = 0;
  aggregate.onServiceEvent((e) => events.push(e));
  aggregate.onEndpointEvent(() => endpointEvents++);
  first.addService(service("a.ns.svc.cluster.local", "ns"));
  second.addService(service("b.ns.svc.cluster.local", "ns"));
  second.setEndpoints("b.ns.svc.cluster.local", "ns", [endpoint("10.1.0.1")]);
  assert.deepEqual(events.map((e) => `${e.type} ${e.service.hostname}`), [
    "add a.ns.svc.cluster.local",
    "add b.ns.svc.cluster.local",
  ]);
  assert.equal(endpointEvents, 1);

  aggregate.removeRegistry(second);
  assert.deepEqual(events.map((e) => `${e.type} ${e.service.hostname}`).slice(2), [
    "delete b.ns.svc.cluster.local",
  ]);
  assert.equal(endpointEvents, 2);
  second.addService(service("c.ns.svc.cluster.local", "ns"));
  assert.equal(events.length, 3);
  assert.deepEqual(aggregate.services().map((s) => s.hostname), ["a.ns.svc.cluster.local"]);
});

Deno.test("AggregateRegistry hands out the sorted list of the only registry with services as it is", () => {
  const { first, second, aggregate } = twoClusters();
  second.addService(service("b.ns.svc.cluster.local", "ns"));
  second.addService(service("a.ns.svc.cluster.local", "ns"));
  const own = second.services();
  // The same list on every call, as the ServiceEntry registry keeps it between changes.
  second.services = () => own;
  assert.equal(aggregate.services(), own, "not copied, merged and sorted again");
  first.addService(service("c.ns.svc.cluster.local", "ns"));
  assert.deepEqual(
    aggregate.services().map((s) => s.hostname),
    ["a.ns.svc.cluster.local", "b.ns.svc.cluster.local", "c.ns.svc.cluster.local"],
  );
});

Deno.test("AggregateRegistry merges one hostname of two clusters' orchestrator registries, and a remote's removal takes back only its part", () => {
  const local = new MemoryRegistry({ provider: "Orchestrator", clusterId: "c1" });
  const remote = new MemoryRegistry({ provider: "Orchestrator", clusterId: "c2", synced: false });
  const aggregate = new AggregateRegistry("c1");
  aggregate.addRegistry(local);
  aggregate.addRegistry(remote, { remote: true });
  local.addService(service("a.ns.svc.cluster.local", "ns", { addresses: ["10.96.0.1"] }));
  remote.addService(service("a.ns.svc.cluster.local", "ns", { addresses: ["10.97.0.1"] }));
  local.setEndpoints("a.ns.svc.cluster.local", "ns", [
    endpoint("10.0.0.1", { locality: { label: "", clusterId: "c1" } }),
  ]);
  remote.setEndpoints("a.ns.svc.cluster.local", "ns", [
    endpoint("10.1.0.1", { locality: { label: "", clusterId: "c2" } }),
  ]);
  const [merged] = aggregate.services();
  assert.equal(aggregate.services().length, 1, "one service for the hostname");
  assert.deepEqual(merged.clusterAddresses, { c1: ["10.96.0.1"], c2: ["10.97.0.1"] });
  assert.deepEqual(aggregate.instances("a.ns.svc.cluster.local", 80, "ns").map((i) => i.endpoint.address), [
    "10.0.0.1",
    "10.1.0.1",
  ]);
  assert.equal(
    aggregate.hasSynced(),
    true,
    "a remote that has not synced does not hold the local cluster back",
  );
  assert.deepEqual(aggregate.unsyncedRegistries(), []);

  const events: ServiceEvent[] = [];
  aggregate.onServiceEvent((e) => events.push(e));
  aggregate.removeRegistry(remote);
  assert.deepEqual(
    events.map((e) => e.type),
    ["update"],
    "the hostname stays, without the remote's addresses",
  );
  assert.equal(aggregate.services()[0].clusterAddresses, undefined);
  assert.deepEqual(aggregate.instances("a.ns.svc.cluster.local", 80, "ns").map((i) => i.endpoint.address), [
    "10.0.0.1",
  ]);
});
