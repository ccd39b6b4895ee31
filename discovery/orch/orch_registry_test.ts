import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { type ApiObject, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { waitFor } from "../config/_test_support.ts";
import type { EndpointEvent, ServiceEvent } from "../registry/service_registry.ts";
import { endpoints, HOST, node, pod, service, withRegistry } from "./_orch_registry_support.ts";
import type { SelectableWorkload, WorkloadSource } from "../registry/workload_source.ts";

/** `ready`, after running the informers' timers that are due (they file what they listed on a zero delay). */
function onClock(clock: FakeTimers.Clock, ready: () => boolean): () => boolean {
  return () => {
    clock.tick(0);
    return ready();
  };
}

function slice(name: string, ready: [string, string][], notReady: [string, string][] = []): ApiObject {
  const endpoint = (isReady: boolean) => ([pod, ip]: [string, string]) => ({
    addresses: [ip],
    conditions: { ready: isReady },
    nodeName: "node-a",
    targetRef: { kind: "Pod", name: pod, namespace: "shop" },
  });
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name, namespace: "shop", labels: { "kubernetes.io/service-name": "ratings" } },
    addressType: "IPv4",
    endpoints: [...ready.map(endpoint(true)), ...notReady.map(endpoint(false))],
    ports: [{ name: "http", port: 9080, protocol: "TCP" }],
  };
}

Deno.test("Orchestrator Services, Endpoints, Pods and Nodes become model services and endpoints", async () => {
  const api = OrchApiServer.start();
  try {
    api.apply(node());
    api.apply(service());
    api.apply(pod("ratings-1", "10.1.0.1", { "security.istio.io/tlsMode": "istio" }));
    api.apply(pod("ratings-2", "10.1.0.2"));
    api.apply(endpoints([["ratings-1", "10.1.0.1"]], [["ratings-2", "10.1.0.2"]]));
    await withRegistry(api, async (r) => {
      await waitFor(() => r.registry.hasSynced(), "the first sync");
      const svc = r.registry.getService(HOST)!;
      assert.deepEqual(svc.addresses, ["10.96.0.10"]);
      assert.deepEqual(svc.exportTo, ["shop"], "exportTo '.' means the service's namespace");
      assert.equal(svc.ports[0].protocol, "HTTP");
      assert.equal(svc.attributes.serviceRegistry, "Orchestrator");
      const instances = r.registry.instances(HOST);
      assert.equal(instances.length, 2);
      const one = instances.find((i) => i.endpoint.address === "10.1.0.1")!.endpoint;
      assert.equal(one.endpointPort, 9080);
      assert.equal(one.healthy, true);
      assert.equal(one.tlsMode, "mesh");
      assert.equal(one.serviceAccount, "ratings");
      assert.equal(one.locality.label, "r1/z1");
      assert.equal(instances.find((i) => i.endpoint.address === "10.1.0.2")!.endpoint.healthy, false);
    });
  } finally {
    await api.close();
  }
});

Deno.test("An Endpoints change is an endpoint event, not a service event", async () => {
  const api = OrchApiServer.start();
  try {
    api.apply(service());
    api.apply(pod("ratings-1", "10.1.0.1"));
    api.apply(endpoints([["ratings-1", "10.1.0.1"]]));
    await withRegistry(api, async (r) => {
      await waitFor(() => r.registry.instances(HOST).length === 1, "the first endpoint");
      const services: ServiceEvent[] = [];
      const eps: EndpointEvent[] = [];
      r.registry.onServiceEvent((e) => services.push(e));
      r.registry.onEndpointEvent((e) => eps.push(e));
      api.apply(pod("ratings-2", "10.1.0.2"));
      api.apply(endpoints([["ratings-1", "10.1.0.1"], ["ratings-2", "10.1.0.2"]]));
      await waitFor(() => r.registry.instances(HOST).length === 2, "the second endpoint");
      assert.deepEqual(services, []);
      assert.ok(eps.length > 0 && eps.every((e) => e.hostname === HOST));
    });
  } finally {
    await api.close();
  }
});

Deno.test("With DISCOVERY_USE_ENDPOINT_SLICE a service's EndpointSlices are its endpoints, changes EDS only", async () => {
  const api = OrchApiServer.start();
  try {
    api.apply(service());
    for (
      const [name, ip] of [["ratings-1", "10.1.0.1"], ["ratings-2", "10.1.0.2"], ["ratings-3", "10.1.0.3"]]
    ) {
      api.apply(pod(name, ip));
    }
    // Endpoints that disagree with the slices: the registry must read only the slices.
    api.apply(endpoints([["ratings-3", "10.1.0.3"]]));
    api.apply(slice("ratings-a", [["ratings-1", "10.1.0.1"]]));
    api.apply(slice("ratings-b", [], [["ratings-2", "10.1.0.2"]]));
    await withRegistry(api, async (r) => {
      await waitFor(() => r.registry.hasSynced(), "the first sync");
      const addresses = () =>
        r.registry.instances(HOST).map((i) => `${i.endpoint.address}:${i.endpoint.healthy}`).sort().join();
      assert.equal(addresses(), "10.1.0.1:true,10.1.0.2:false");
      const services: ServiceEvent[] = [];
      r.registry.onServiceEvent((e) => services.push(e));
      api.apply(slice("ratings-b", [["ratings-2", "10.1.0.2"], ["ratings-3", "10.1.0.3"]]));
      await waitFor(() => addresses() === "10.1.0.1:true,10.1.0.2:true,10.1.0.3:true", "the changed slice");
      api.delete("discovery.k8s.io/v1", "EndpointSlice", "shop", "ratings-a");
      await waitFor(() => addresses() === "10.1.0.2:true,10.1.0.3:true", "the deleted slice gone");
      assert.deepEqual(services, [], "slice changes are endpoint events only");
    }, { useEndpointSlices: true });
  } finally {
    await api.close();
  }
});

Deno.test("Updates that change nothing the mesh reads, and periodic resyncs, emit no events", async () => {
  const api = OrchApiServer.start();
  const clock = FakeTimers.createClock(0);
  try {
    api.apply(service());
    api.apply(pod("ratings-1", "10.1.0.1"));
    api.apply(pod("other-1", "10.1.0.9", { app: "other" }));
    api.apply(endpoints([["ratings-1", "10.1.0.1"]]));
    await withRegistry(api, async (r) => {
      await waitFor(onClock(clock, () => r.registry.instances(HOST).length === 1), "the first endpoint");
      const events: unknown[] = [];
      r.registry.onServiceEvent((e) => events.push(e));
      r.registry.onEndpointEvent((e) => events.push(e));
      // A status-only change of the pod (a new resource version), and a change to a pod no endpoint names.
      api.apply({
        ...pod("ratings-1", "10.1.0.1"),
        status: { podIP: "10.1.0.1", phase: "Running", hostIP: "1.2.3.4" },
      });
      api.apply(pod("other-1", "10.1.0.9", { app: "other", version: "v2" }));
      api.apply(service());
      clock.tick(300);
      // The probe: a label change, which endpoints carry, comes after the no-op updates and the resyncs.
      api.apply(pod("ratings-1", "10.1.0.1", { version: "v2" }));
      await waitFor(onClock(clock, () => events.length > 0), "a label change, which endpoints carry");
      assert.equal(events.length, 1, "three resyncs and three no-op updates emit nothing");
    }, { resyncMs: 100, timers: timersOf(clock) });
  } finally {
    await api.close();
  }
});

Deno.test("The registry resyncs on its injected clock, and stopping it cancels the resync", async () => {
  const api = OrchApiServer.start();
  const clock = FakeTimers.createClock(0);
  try {
    api.apply(service());
    await withRegistry(api, async (r) => {
      let synced = false;
      void r.initiallySynced.then(() => synced = true);
      await waitFor(onClock(clock, () => synced), "the first lists");
      assert.equal(clock.countTimers(), 1, "the next resync");
      clock.tick(250);
      assert.equal(clock.countTimers(), 1, "one resync pending at a time");
    }, { resyncMs: 100, timers: timersOf(clock) });
    assert.equal(clock.countTimers(), 0, "nothing left after stop");
  } finally {
    await api.close();
  }
});

Deno.test("A Service selects WorkloadEntries too, following their changes", async () => {
  const api = OrchApiServer.start();
  let entries: SelectableWorkload[] = [
    {
      name: "vm-1",
      namespace: "shop",
      spec: { address: "10.9.0.1", labels: { app: "ratings" }, ports: { http: 9090 } },
    },
    { name: "vm-x", namespace: "shop", spec: { address: "10.9.0.9", labels: { app: "other" } } },
  ];
  const listeners = new Set<(namespace: string) => void>();
  const source: WorkloadSource = {
    workloads: (namespace) => entries.filter((e) => e.namespace === namespace),
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  try {
    api.apply(service());
    api.apply(pod("ratings-1", "10.1.0.1"));
    api.apply(endpoints([["ratings-1", "10.1.0.1"]]));
    await withRegistry(api, async (r) => {
      r.selectWorkloadEntries(source);
      await waitFor(() => r.registry.instances(HOST).length === 2, "the pod and the selected WorkloadEntry");
      const vm = r.registry.instances(HOST).find((i) => i.endpoint.address === "10.9.0.1")!.endpoint;
      assert.equal(vm.endpointPort, 9090, "the WorkloadEntry's port for the service port's name");
      assert.equal(vm.workloadName, "vm-1");
      entries = [...entries, {
        name: "vm-2",
        namespace: "shop",
        spec: { address: "10.9.0.2", labels: { app: "ratings" } },
      }];
      for (const listener of listeners) listener("shop");
      await waitFor(() => r.registry.instances(HOST).length === 3, "the new WorkloadEntry");
      const vm2 = r.registry.instances(HOST).find((i) => i.endpoint.address === "10.9.0.2")!.endpoint;
      assert.equal(vm2.endpointPort, 8080, "without a named port: the service port");
    });
  } finally {
    await api.close();
  }
});

Deno.test("Endpoints are on their pod's network, else their namespace's, following namespace changes", async () => {
  const api = OrchApiServer.start();
  const namespace = (network: string) => ({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "shop", labels: { "topology.istio.io/network": network } },
  });
  try {
    api.apply(namespace("net-a"));
    api.apply(service());
    api.apply(pod("ratings-1", "10.1.0.1"));
    api.apply(pod("ratings-2", "10.1.0.2", { "topology.mesh.io/network": "net-own" }));
    api.apply(endpoints([["ratings-1", "10.1.0.1"], ["ratings-2", "10.1.0.2"]]));
    await withRegistry(api, async (r) => {
      const networks = () =>
        r.registry.instances(HOST).map((i) => `${i.endpoint.address} ${i.endpoint.network}`).sort();
      await waitFor(() => r.registry.hasSynced(), "the first sync");
      assert.deepEqual(networks(), ["10.1.0.1 net-a", "10.1.0.2 net-own"]);
      api.apply(namespace("net-b"));
      await waitFor(() => networks()[0] === "10.1.0.1 net-b", "the namespace's new network");
      assert.equal(networks()[1], "10.1.0.2 net-own");
    });
  } finally {
    await api.close();
  }
});

Deno.test("Dropped watches and expired versions relist without losing or duplicating anything", async () => {
  const api = OrchApiServer.start();
  try {
    api.apply(service());
    api.apply(pod("ratings-1", "10.1.0.1"));
    api.apply(endpoints([["ratings-1", "10.1.0.1"]]));
    await withRegistry(api, async (r) => {
      await waitFor(() => r.registry.instances(HOST).length === 1, "the first endpoint");
      await waitFor(() => api.watchCount >= 4, "every informer watching");
      // Changes made while no watch is open, with the history forgotten: only a relist can see them.
      api.dropWatches();
      api.apply(pod("ratings-2", "10.1.0.2"));
      api.apply(endpoints([["ratings-1", "10.1.0.1"], ["ratings-2", "10.1.0.2"]]));
      api.compact();
      await waitFor(() => r.registry.instances(HOST).length === 2, "the change made while disconnected");
      api.delete("v1", "Service", "shop", "ratings");
      await waitFor(() => r.registry.getService(HOST) === undefined, "the deletion");
      assert.equal(r.registry.services().length, 0);
    });
  } finally {
    await api.close();
  }
});
