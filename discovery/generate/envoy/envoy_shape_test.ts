import assert from "node:assert/strict";
import { parseProxy, type Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { GREETER, networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyEdsGenerator } from "./envoy_eds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import { envoyRdsGenerator } from "./envoy_rds.ts";

Deno.test("Envoy sidecars of one namespace and scope share EDS and RDS shapes; what those read tells them apart", () => {
  const push = new World().apply(...envoyResources()).push();
  const a = envoySidecar("example", "10.0.2.1", { app: "web" });
  const b = envoySidecar("example", "10.0.2.2", { app: "web" });
  const wildcard = { names: [], full: true };
  const eds = (proxy: Proxy, p: PushContext) => envoyEdsGenerator.shapeOf!(proxy, p, wildcard);
  const rds = (proxy: Proxy, p: PushContext) => envoyRdsGenerator.shapeOf!(proxy, p, wildcard);
  assert.equal(eds(a, push), eds(b, push), "addresses do not matter to EDS");
  assert.equal(rds(a, push), rds(b, push));
  assert.notEqual(
    rds(a, push),
    rds(envoySidecar("example", "10.0.2.3", { app: "api" }), push),
    "labels matter to RDS",
  );
  const elsewhere = envoySidecar("other", "10.0.2.1", { app: "web" });
  assert.equal(eds(a, push), eds(elsewhere, push), "EDS: namespaces that see the snapshot alike");
  assert.notEqual(rds(a, push), rds(elsewhere, push), "RDS reads the namespace's short names");
  const located = parseProxy({
    id: "sidecar~10.0.2.4~app.example~example.svc.cluster.local",
    metadata: { NAMESPACE: "example", LABELS: { app: "web" } },
    locality: { region: "r1", zone: "z1" },
  });
  assert.notEqual(eds(a, push), eds(located, push), "locality matters to EDS");
  assert.equal(envoyCdsGenerator.shapeOf, undefined, "CDS reads the proxy's own addresses: not shared");
  assert.equal(envoyLdsGenerator.shapeOf, undefined);
});

Deno.test("Sidecars of one namespace and scope share outbound cluster plans until endpoints change", () => {
  const world = new World().apply(...envoyResources());
  const push = world.push();
  const identitiesOf = (ip: string) => {
    const cds = run(envoyCdsGenerator, envoySidecar("example", ip, { app: "web" }), push);
    return JSON.stringify(cds.byName.get("outbound|8080||ratings.example.svc.cluster.local"));
  };
  const first = identitiesOf("10.0.2.11");
  assert.equal(identitiesOf("10.0.2.12"), first, "a second sidecar of the same shape gets the same clusters");
  assert.ok(!first.includes("sa/ratings-canary"));
  // A new workload of the service runs under another account: same snapshot, new endpoint generation.
  world.apply(networking("WorkloadEntry", "example", "ratings-canary", {
    address: "10.0.2.99",
    labels: { app: "ratings", "security.istio.io/tlsMode": "istio" },
    serviceAccount: "ratings-canary",
  }));
  assert.match(
    identitiesOf("10.0.2.13"),
    /sa\/ratings-canary/,
    "the shared plans follow the endpoint change",
  );
});

Deno.test("Envoy EDS shapes part a namespace the snapshot singles out, and shape-mates get equal endpoints", () => {
  const world = new World().apply(...envoyResources());
  world.apply(networking("DestinationRule", "mine", "greeter", {
    host: GREETER,
    subsets: [{ name: "v9", labels: { version: "v9" } }],
  }));
  const push = world.push();
  const wildcard = { names: [], full: true };
  const shape = (proxy: Proxy) => envoyEdsGenerator.shapeOf!(proxy, push, wildcard);
  const [example, other, mine] = [
    envoySidecar("example", "10.0.3.1"),
    envoySidecar("other", "10.0.3.2"),
    envoySidecar("mine", "10.0.3.3"),
  ];
  assert.equal(shape(example), shape(other));
  assert.notEqual(shape(mine), shape(example), "its own DestinationRule for another's host singles it out");
  const endpoints = (proxy: Proxy) => {
    const { names, cacheable } = run(envoyEdsGenerator, proxy, push);
    return names.map((name) => `${name} ${cacheable.get(name)?.key.id}`);
  };
  assert.deepEqual(endpoints(other), endpoints(example), "equal shapes, equal resources");
  assert.ok(endpoints(mine).some((line) => line.includes("|v9|")), "the singled-out one sees its own subset");
  assert.ok(!endpoints(example).some((line) => line.includes("|v9|")));
});
