import assert from "node:assert/strict";
import { createMockRegistry, MemoryRegistry } from "./memory_registry.ts";
import type { EndpointEvent, ServiceEvent } from "./service_registry.ts";
import { endpoint, service, sidecar } from "./_test_support.ts";

Deno.test("The Mock registry starts empty and synced", () => {
  const mock = createMockRegistry("cluster-a");
  assert.equal(mock.provider, "Mock");
  assert.equal(mock.clusterId, "cluster-a");
  assert.equal(mock.hasSynced(), true);
  assert.deepEqual(mock.services(), []);
});

Deno.test("MemoryRegistry holds services and endpoints set by code", async (t) => {
  const registry = new MemoryRegistry({ provider: "Mock", clusterId: "c1" });
  const serviceEvents: ServiceEvent[] = [];
  const endpointEvents: EndpointEvent[] = [];
  registry.onServiceEvent((e) => serviceEvents.push(e));
  registry.onEndpointEvent((e) => endpointEvents.push(e));

  await t.step("adding a service emits add, replacing it emits update", () => {
    registry.addService(service("a.ns.svc.cluster.local", "ns"));
    registry.addService(service("a.ns.svc.cluster.local", "ns", { addresses: ["10.96.0.1"] }));
    assert.deepEqual(serviceEvents.map((e) => e.type), ["add", "update"]);
    assert.deepEqual(serviceEvents[1].previous?.addresses, []);
    assert.deepEqual(registry.getService("a.ns.svc.cluster.local")?.addresses, ["10.96.0.1"]);
  });

  await t.step("stored services are frozen copies", () => {
    const s = registry.getService("a.ns.svc.cluster.local")!;
    assert.ok(Object.isFrozen(s) && Object.isFrozen(s.ports[0]));
  });

  await t.step("endpoints become instances of the named port, stamped with the cluster id", () => {
    registry.setEndpoints("a.ns.svc.cluster.local", "ns", [
      endpoint("10.0.0.1"),
      endpoint("10.0.0.2", { servicePortName: "missing" }),
    ]);
    assert.deepEqual(endpointEvents, [{
      hostname: "a.ns.svc.cluster.local",
      namespace: "ns",
      clusterId: "c1",
    }]);
    const instances = registry.instances("a.ns.svc.cluster.local");
    assert.deepEqual(
      instances.map((i) => [i.endpoint.address, i.servicePort.port, i.endpoint.locality.clusterId]),
      [
        ["10.0.0.1", 80, "c1"],
      ],
    );
    assert.equal(registry.instances("a.ns.svc.cluster.local", 81).length, 0);
    assert.equal(registry.instances("a.ns.svc.cluster.local", 80, "other").length, 0);
  });

  await t.step("proxyInstances finds the instances at the proxy's address", () => {
    assert.equal(registry.proxyInstances(sidecar("10.0.0.1", "ns")).length, 1);
    assert.equal(registry.proxyInstances(sidecar("10.0.0.9", "ns")).length, 0);
  });

  await t.step("removing a service emits delete and an endpoint event", () => {
    registry.removeService("a.ns.svc.cluster.local", "ns");
    assert.equal(serviceEvents.at(-1)?.type, "delete");
    assert.equal(endpointEvents.length, 2);
    assert.deepEqual(registry.services(), []);
    assert.deepEqual(registry.instances("a.ns.svc.cluster.local"), []);
  });
});
