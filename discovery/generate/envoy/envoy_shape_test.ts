import assert from "node:assert/strict";
import { parseProxy } from "../../model/proxy.ts";
import { World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyEdsGenerator } from "./envoy_eds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import { envoyRdsGenerator } from "./envoy_rds.ts";

Deno.test("Envoy sidecars of one namespace and scope share EDS and RDS shapes; what those read tells them apart", () => {
  const push = new World().apply(...envoyResources()).push();
  const a = envoySidecar("example", "10.0.2.1", { app: "web" });
  const b = envoySidecar("example", "10.0.2.2", { app: "web" });
  const eds = envoyEdsGenerator.shapeOf!;
  const rds = envoyRdsGenerator.shapeOf!;
  assert.equal(eds(a, push), eds(b, push), "addresses do not matter to EDS");
  assert.equal(rds(a, push), rds(b, push));
  assert.notEqual(
    rds(a, push),
    rds(envoySidecar("example", "10.0.2.3", { app: "api" }), push),
    "labels matter to RDS",
  );
  assert.notEqual(
    eds(a, push),
    eds(envoySidecar("other", "10.0.2.1", { app: "web" }), push),
    "so does the namespace",
  );
  const located = parseProxy({
    id: "sidecar~10.0.2.4~app.example~example.svc.cluster.local",
    metadata: { NAMESPACE: "example", LABELS: { app: "web" } },
    locality: { region: "r1", zone: "z1" },
  });
  assert.notEqual(eds(a, push), eds(located, push), "locality matters to EDS");
  assert.equal(envoyCdsGenerator.shapeOf, undefined, "CDS reads the proxy's own addresses: not shared");
  assert.equal(envoyLdsGenerator.shapeOf, undefined);
});
