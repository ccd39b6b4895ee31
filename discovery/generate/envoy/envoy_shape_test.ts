import assert from "node:assert/strict";
import { parseProxy, type Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { GREETER, networking, run, World } from "../_test_world.ts";
import { SECURITY_GROUP } from "@mesh/shared/config/kinds";
import type { Resource } from "@mesh/shared/config/resource";
import { envoyResources, envoySidecar, ingressGateway } from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyEdsGenerator } from "./envoy_eds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import { ListenerConflicts } from "../../push/listener_conflicts.ts";
import { envoyRdsGenerator } from "./envoy_rds.ts";

function security(kind: string, namespace: string, name: string, spec: unknown): Resource {
  const r = networking(kind, namespace, name, spec);
  return { ...r, gvk: { ...r.gvk, group: SECURITY_GROUP } };
}

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
});

Deno.test("Sidecars whose inbound side is alike share CDS and LDS shapes; addresses, labels and security policies part them", () => {
  const push = new World().apply(...envoyResources()).push();
  const wildcard = { names: [], full: true };
  const cds = (proxy: Proxy) => envoyCdsGenerator.shapeOf!(proxy, push, wildcard);
  const lds = (proxy: Proxy) => envoyLdsGenerator.shapeOf!(proxy, push, wildcard);
  // Neither address is an endpoint: both are clients with no inbound side.
  const [a, b] = [
    envoySidecar("example", "10.0.9.1", { app: "web" }),
    envoySidecar("example", "10.0.9.2", { app: "web" }),
  ];
  assert.equal(cds(a), cds(b), "two clients of one namespace and labels share their clusters");
  assert.equal(lds(a), lds(b), "and their listeners");
  const ratings = envoySidecar("example", "10.0.2.1", { app: "web" });
  assert.notEqual(cds(ratings), cds(a), "a workload serving a service has inbound clusters of its own");
  assert.notEqual(lds(ratings), lds(a), "and inbound listeners");
  const api = envoySidecar("example", "10.0.9.3", { app: "api" });
  assert.notEqual(lds(api), lds(a), "labels select security policies");
  assert.notEqual(cds(api), cds(a), "and RequestAuthentications' JWKS clusters");
  const elsewhere = envoySidecar("other", "10.0.9.1", { app: "web" });
  assert.equal(
    cds(elsewhere),
    cds(a),
    "namespaces the snapshot sees alike share, without policies of their own",
  );
  assert.equal(lds(elsewhere), lds(a));
  const strict = new World().apply(
    ...envoyResources(),
    security("PeerAuthentication", "other", "strict", { mtls: { mode: "STRICT" } }),
    security("RequestAuthentication", "other", "jwt", {
      jwtRules: [{ issuer: "i", jwksUri: "https://i/jwks" }],
    }),
  ).push();
  const shapes = (p: PushContext, proxy: Proxy) =>
    [envoyCdsGenerator, envoyLdsGenerator].map((g) => g.shapeOf!(proxy, p, wildcard));
  const [cdsHere, ldsHere] = shapes(strict, a);
  const [cdsThere, ldsThere] = shapes(strict, elsewhere);
  assert.notEqual(ldsThere, ldsHere, "a namespace's PeerAuthentication sets its sidecars' listeners apart");
  assert.notEqual(cdsThere, cdsHere, "and its RequestAuthentication their clusters (JWKS)");
  assert.equal(cds(ingressGateway()), undefined, "a gateway's clusters are its own");
  assert.equal(lds(ingressGateway()), undefined, "and its listeners");
  const same = (proxy: Proxy, other: Proxy) => {
    for (const generator of [envoyCdsGenerator, envoyLdsGenerator]) {
      const bytes = (p: Proxy) =>
        JSON.stringify([...run(generator, p, push).bytes].map(([n, v]) => [n, [...v]]));
      assert.equal(bytes(proxy), bytes(other), `shape-mates get the same ${generator.typeUrl}`);
    }
  };
  same(a, b);
});

Deno.test("Every sidecar at no endpoint address is counted in discovery_no_ip, though shape-mates share one LDS", () => {
  const push = new World().apply(...envoyResources()).push();
  const conflicts = new ListenerConflicts();
  const wildcard = { names: [], full: true, conflicts };
  const client = (pod: string, ip: string) =>
    parseProxy({
      id: `sidecar~${ip}~${pod}.example~example.svc.cluster.local`,
      metadata: { NAMESPACE: "example", LABELS: {}, INSTANCE_IPS: ip },
    });
  const [one, two] = [client("one", "10.0.9.1"), client("two", "10.0.9.2")];
  // The server asks every proxy its shape, and generates for the first of a shape only.
  assert.equal(
    envoyLdsGenerator.shapeOf!(one, push, wildcard),
    envoyLdsGenerator.shapeOf!(two, push, wildcard),
  );
  assert.deepEqual(conflicts.keys("discovery_no_ip"), ["one.example", "two.example"]);
});

Deno.test("Sidecars of one namespace and scope share outbound cluster plans until endpoints change", () => {
  const world = new World().apply(...envoyResources());
  let push = world.push();
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
  assert.ok(!identitiesOf("10.0.2.13").includes("sa/ratings-canary"), "a published snapshot never changes");
  // The endpoint-only push hands generators a copy of the snapshot with the newer endpoints.
  push = push.withEndpoints(world.endpoints.snapshot());
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

Deno.test("Sidecars with equal CDS or LDS shapes get the same bytes, whatever their namespace, labels and address", () => {
  const push = new World().apply(
    ...envoyResources(),
    security("PeerAuthentication", "other", "strict", { mtls: { mode: "STRICT" } }),
    security("AuthorizationPolicy", "mesh-system", "deny-api", {
      selector: { matchLabels: { app: "api" } },
      action: "DENY",
      rules: [{}],
    }),
    security("RequestAuthentication", "example", "jwt", {
      selector: { matchLabels: { app: "web" } },
      jwtRules: [{ issuer: "https://issuer.example.com", jwksUri: "https://issuer.example.com/jwks" }],
    }),
  ).push();
  const wildcard = { names: [], full: true };
  const proxies: Proxy[] = [];
  let n = 0;
  for (const namespace of ["example", "other", "third", "mesh-system"]) {
    for (const app of ["web", "api", "ratings"]) {
      for (const ip of [`10.0.9.${++n}`, "10.0.2.1"]) {
        proxies.push(parseProxy({
          id: `sidecar~${ip}~pod-${n}.${namespace}~${namespace}.svc.cluster.local`,
          metadata: { NAMESPACE: namespace, LABELS: { app }, INSTANCE_IPS: ip },
        }));
      }
    }
  }
  for (const generator of [envoyCdsGenerator, envoyLdsGenerator]) {
    const groups = new Map<string, Proxy[]>();
    for (const proxy of proxies) {
      const shape = generator.shapeOf!(proxy, push, wildcard)!;
      groups.set(shape, [...groups.get(shape) ?? [], proxy]);
    }
    assert.ok([...groups.values()].some((g) => g.length > 2), "some proxies share a shape");
    assert.ok(groups.size > 2, "and some are set apart");
    for (const group of groups.values()) {
      const bytes = (p: Proxy) =>
        JSON.stringify([...run(generator, p, push).bytes].map(([k, v]) => [k, [...v]]));
      const first = bytes(group[0]);
      for (const proxy of group.slice(1)) {
        assert.equal(bytes(proxy), first, `${proxy.id} shares ${group[0].id}'s ${generator.typeUrl} shape`);
      }
    }
  }
});
