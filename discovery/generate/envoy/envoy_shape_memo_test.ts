import assert from "node:assert/strict";
import { parseProxy, type Proxy } from "../../model/proxy.ts";
import { DerivedMemo } from "../../push/derived_memo.ts";
import type { PushContext } from "../../push/push_context.ts";
import { networking, World } from "../_test_world.ts";
import { SECURITY_GROUP } from "@mesh/shared/config/kinds";
import type { Resource } from "@mesh/shared/config/resource";
import type { GenerateRequest, XdsGenerator } from "../generator.ts";
import { envoyResources, envoySidecar, ingressGateway } from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyEdsGenerator } from "./envoy_eds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import { envoyRdsGenerator } from "./envoy_rds.ts";
import { computeEnvoyProxyShape, envoyProxyShape, type ShapeReads } from "./envoy_shape.ts";

const GENERATORS: readonly XdsGenerator<PushContext>[] = [
  envoyCdsGenerator,
  envoyEdsGenerator,
  envoyLdsGenerator,
  envoyRdsGenerator,
];
const WILDCARD: GenerateRequest = { names: [], full: true };
const ALL_READS: readonly ShapeReads[] = [0, 1, 2, 3, 4, 5, 6, 7].map((bits) => ({
  locality: (bits & 1) !== 0,
  labels: (bits & 2) !== 0,
  shortNames: (bits & 4) !== 0,
}));

function security(kind: string, namespace: string, name: string, spec: unknown): Resource {
  const r = networking(kind, namespace, name, spec);
  return { ...r, gvk: { ...r.gvk, group: SECURITY_GROUP } };
}

function proxies(): Proxy[] {
  return [
    envoySidecar("example", "10.0.2.1", { app: "web" }),
    envoySidecar("example", "10.0.9.1", { app: "web" }),
    envoySidecar("example", "10.0.9.3", { app: "api" }),
    envoySidecar("other", "10.0.9.1", { app: "web" }),
    parseProxy({
      id: "sidecar~10.0.2.4~app.example~example.svc.cluster.local",
      metadata: { NAMESPACE: "example", LABELS: { app: "web" } },
      locality: { region: "r1", zone: "z1" },
    }),
    ingressGateway(),
  ];
}

/** Every type's shape key of every proxy, in one snapshot. */
function keys(push: PushContext, of: readonly Proxy[], request = WILDCARD): (string | undefined)[] {
  return of.flatMap((proxy) => GENERATORS.map((generator) => generator.shapeOf!(proxy, push, request)));
}

Deno.test("A proxy's remembered shape keys equal the keys worked out afresh, for every type and request", () => {
  const world = new World().apply(
    ...envoyResources(),
    security("RequestAuthentication", "example", "jwt", {
      selector: { matchLabels: { app: "api" } },
      jwtRules: [{ issuer: "i", jwksUri: "https://i/jwks" }],
    }),
    security("AuthorizationPolicy", "example", "deny", { selector: { matchLabels: { app: "web" } } }),
  );
  const of = proxies();
  const named: GenerateRequest = { names: ["outbound|80||greeter.example.svc.cluster.local"], full: false };
  for (const request of [WILDCARD, named]) {
    const fresh = keys(world.push(), of, request);
    const remembering = world.push();
    keys(remembering, of, request);
    assert.deepEqual(keys(remembering, of, request), fresh, "asked again in one snapshot: the same keys");
    for (const proxy of of) {
      for (const reads of ALL_READS) {
        assert.equal(
          envoyProxyShape(proxy, remembering, reads),
          computeEnvoyProxyShape(proxy, remembering, reads),
          `${proxy.id} ${JSON.stringify(reads)}`,
        );
      }
    }
  }
});

Deno.test("A new snapshot whose Sidecar or security policies changed gives the same proxy fresh shape keys", () => {
  const world = new World().apply(...envoyResources());
  const proxy = envoySidecar("example", "10.0.9.1", { app: "web" });
  // The server's pipeline hands each snapshot the successor of the previous snapshot's memo.
  let memo = new DerivedMemo();
  const next = () => world.push({ derived: memo = memo.successor() });
  const before = keys(next(), [proxy]);
  world.apply(
    networking("Sidecar", "example", "web", {
      workloadSelector: { labels: { app: "web" } },
      egress: [{ hosts: ["./*"] }],
    }),
    security("AuthorizationPolicy", "example", "deny", { selector: { matchLabels: { app: "web" } } }),
    security("RequestAuthentication", "example", "jwt", {
      selector: { matchLabels: { app: "web" } },
      jwtRules: [{ issuer: "i", jwksUri: "https://i/jwks" }],
    }),
  );
  const push = next();
  const after = keys(push, [proxy]);
  const [cds, eds, lds, rds] = after;
  assert.notEqual(cds, before[0], "the Sidecar scope and the RequestAuthentication's JWKS part CDS");
  assert.notEqual(eds, before[1], "the Sidecar scope parts EDS");
  assert.notEqual(lds, before[2], "the Sidecar scope and the policies part LDS");
  assert.notEqual(rds, before[3], "the Sidecar scope parts RDS");
  assert.deepEqual(after, keys(world.push(), [proxy]), "the keys of a snapshot built without a memo");
  world.delete("Sidecar", "example", "web");
  const [cdsNow, , ldsNow] = keys(next(), [proxy]);
  assert.notEqual(cdsNow, cds, "without the Sidecar, the JWKS cluster alone sets CDS apart");
  assert.notEqual(ldsNow, lds, "and the policies alone LDS");
  assert.notEqual(ldsNow, before[2]);
});

Deno.test("A proxy that reconnects with other labels gets fresh shape keys in the same snapshot", () => {
  const world = new World().apply(
    ...envoyResources(),
    networking("Sidecar", "example", "web", {
      workloadSelector: { labels: { app: "web" } },
      egress: [{ hosts: ["./*"] }],
    }),
    security("AuthorizationPolicy", "example", "deny", { selector: { matchLabels: { app: "web" } } }),
  );
  const push = world.push();
  const web = envoySidecar("example", "10.0.9.1", { app: "web" });
  const api = envoySidecar("example", "10.0.9.1", { app: "api" });
  assert.equal(web.id, api.id, "one proxy, before and after its labels changed");
  const [cdsWeb, edsWeb, ldsWeb, rdsWeb] = keys(push, [web]);
  const [cdsApi, edsApi, ldsApi, rdsApi] = keys(push, [api]);
  assert.notEqual(cdsApi, cdsWeb, "its labels and scope are part of CDS");
  assert.notEqual(edsApi, edsWeb, "its Sidecar scope is part of EDS");
  assert.notEqual(ldsApi, ldsWeb, "its policies are part of LDS");
  assert.notEqual(rdsApi, rdsWeb, "its labels are part of RDS");
  assert.deepEqual([cdsApi, edsApi, ldsApi, rdsApi], keys(world.push(), [api]));
});
