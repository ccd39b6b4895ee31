import assert from "node:assert/strict";
import type { ServiceInstance } from "../model/endpoint.ts";
import type { ServiceDiscovery } from "../registry/service_registry.ts";
import { endpoint, service } from "../registry/_test_support.ts";
import { EndpointIndex } from "./endpoint_index.ts";

const SERVICE = service("a.example", "ns");

/** Instances whose endpoint counts its reads, as a registry hands them out: frozen, kept while unchanged. */
function counted(reads: { n: number }) {
  return (address: string, clusterId = "c1"): ServiceInstance => {
    const ep = Object.freeze(endpoint(address, { locality: Object.freeze({ label: "", clusterId }) }));
    const instance = { service: SERVICE, servicePort: SERVICE.ports[0] } as ServiceInstance;
    Object.defineProperty(instance, "endpoint", {
      enumerable: true,
      get: () => {
        reads.n++;
        return ep;
      },
    });
    return Object.freeze(instance);
  };
}

/** A registry of one service whose instance list the test sets. */
function oneService(list: { current: readonly ServiceInstance[] }): ServiceDiscovery {
  return { instances: () => list.current } as unknown as ServiceDiscovery;
}

const EVENT = { hostname: "a.example", namespace: "ns" };
const addresses = (index: EndpointIndex) =>
  [...index.shards("a.example", "ns").byCluster.values()].flat().map((i) => i.endpoint.address);

Deno.test("EndpointIndex reads only the instances an event changed, not the rest of the service's list", () => {
  const reads = { n: 0 };
  const make = counted(reads);
  const list = {
    current: Array.from({ length: 100 }, (_, i) => make(`10.0.0.${i}`)) as readonly ServiceInstance[],
  };
  const index = new EndpointIndex(oneService(list));
  assert.equal(index.update(EVENT), true);
  const first = index.snapshot().shards("a.example", "ns");

  reads.n = 0;
  list.current = [...list.current, make("10.0.1.0")];
  assert.equal(index.update(EVENT), true, "a workload added");
  assert.ok(reads.n <= 1, `read ${reads.n} endpoints for one added instance`);

  reads.n = 0;
  list.current = list.current.toSpliced(50, 1, make("10.0.2.0"));
  assert.equal(index.update(EVENT), true, "a workload changed");
  assert.ok(reads.n <= 3, `read ${reads.n} endpoints for one changed instance`);

  reads.n = 0;
  list.current = list.current.toSpliced(20, 1, make("10.0.0.20"));
  assert.equal(index.update(EVENT), false, "a new object with the same endpoint is no change");
  assert.ok(reads.n <= 3, `read ${reads.n} endpoints for one equal instance`);

  reads.n = 0;
  list.current = list.current.toSpliced(70, 1);
  assert.equal(index.update(EVENT), true, "a workload removed");
  assert.equal(reads.n, 0);

  const shards = index.snapshot().shards("a.example", "ns");
  assert.equal(shards.version, first.version + 3);
  const expected = Array.from({ length: 100 }, (_, i) => `10.0.0.${i}`);
  expected.push("10.0.1.0");
  expected.splice(50, 1, "10.0.2.0");
  expected.splice(70, 1);
  assert.deepEqual(addresses(index), expected);
  assert.ok(Object.isFrozen(shards.byCluster.get("c1")));
  assert.equal(first.byCluster.get("c1")!.length, 100, "the first snapshot's list is as it was");
});

Deno.test("EndpointIndex groups a service by cluster again once its endpoints span clusters or are gone", () => {
  const make = counted({ n: 0 });
  const list = { current: [make("10.0.0.1"), make("10.0.0.2")] as readonly ServiceInstance[] };
  const index = new EndpointIndex(oneService(list));
  index.update(EVENT);
  list.current = [...list.current, make("10.1.0.1", "c0")];
  assert.equal(index.update(EVENT), true);
  const byCluster = index.snapshot().shards("a.example", "ns").byCluster;
  assert.deepEqual([...byCluster.keys()], ["c0", "c1"]);
  assert.deepEqual(byCluster.get("c0")!.map((i) => i.endpoint.address), ["10.1.0.1"]);
  list.current = [list.current[2]];
  assert.equal(index.update(EVENT), true);
  assert.deepEqual(addresses(index), ["10.1.0.1"]);
  list.current = [];
  assert.equal(index.update(EVENT), true);
  assert.equal(index.snapshot().shards("a.example", "ns").byCluster.size, 0);
  assert.deepEqual(index.all(), [], "a service without endpoints is not listed");
});

Deno.test("EndpointIndex patches a list exactly as it would group it afresh, on random edits", () => {
  const make = counted({ n: 0 });
  let seed = 7;
  const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const list = { current: [] as readonly ServiceInstance[] };
  const index = new EndpointIndex(oneService(list));
  let next = 0;
  for (let step = 0; step < 300; step++) {
    const edited = [...list.current];
    const at = random(edited.length + 1);
    const remove = random(3);
    const add = Array.from({ length: random(3) }, () => make(`10.0.${random(4)}.${next++ % 250}`));
    if (random(10) === 0) add.push(make("10.9.0.1", "c2"));
    edited.splice(at, remove, ...add);
    const before = addresses(index);
    list.current = edited;
    const changed = index.update(EVENT);
    const fresh = new EndpointIndex(oneService(list));
    fresh.update(EVENT);
    const want = [...fresh.shards("a.example", "ns").byCluster].map((
      [c, l],
    ) => [c, l.map((i) => i.endpoint)]);
    const got = [...index.shards("a.example", "ns").byCluster].map(([c, l]) => [c, l.map((i) => i.endpoint)]);
    assert.deepEqual(got, want, `step ${step}`);
    assert.equal(changed, JSON.stringify(before) !== JSON.stringify(addresses(index)), `step ${step}`);
  }
});

Deno.test("EndpointIndex keeps a registry's frozen list of one cluster as it is instead of copying it", () => {
  const make = counted({ n: 0 });
  const list = { current: Object.freeze([make("10.0.0.1"), make("10.0.0.2")]) as readonly ServiceInstance[] };
  const index = new EndpointIndex(oneService(list));
  index.update(EVENT);
  assert.equal(index.snapshot().shards("a.example", "ns").byCluster.get("c1"), list.current);
  list.current = Object.freeze([...list.current, make("10.0.0.3")]);
  index.update(EVENT);
  assert.equal(index.snapshot().shards("a.example", "ns").byCluster.get("c1"), list.current);
});
