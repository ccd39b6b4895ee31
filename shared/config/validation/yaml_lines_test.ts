import assert from "node:assert/strict";
import { LineCounter, parseAllDocuments } from "yaml";
import { splitPath, yamlLineResolver } from "./yaml_lines.ts";

const TEXT = `apiVersion: networking.istio.io/v1beta1
kind: VirtualService
metadata:
  name: reviews
  labels:
    "app.kubernetes.io/name": reviews
spec:
  hosts:
  - reviews
  http:
  - route:
    - destination:
        host: reviews
      weight: 120
---
kind: Sidecar
spec:
  egress:
`;

Deno.test("splitPath splits issue paths into keys and indexes", () => {
  assert.deepEqual(splitPath("spec.http[0].route[12].weight"), ["spec", "http", 0, "route", 12, "weight"]);
  assert.deepEqual(splitPath('metadata.labels["app.kubernetes.io/name"]'), [
    "metadata",
    "labels",
    "app.kubernetes.io/name",
  ]);
  assert.deepEqual(splitPath(""), []);
});

Deno.test("yamlLineResolver maps issue paths to source lines", async (t) => {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(TEXT, { lineCounter });
  assert.ok(Array.isArray(docs));
  const first = yamlLineResolver(docs[0], lineCounter);
  const second = yamlLineResolver(docs[1], lineCounter);

  await t.step("fields and list items", () => {
    assert.equal(first("spec.http[0].route[0].weight"), 14);
    assert.equal(first("spec.hosts[0]"), 9);
    assert.equal(first('metadata.labels["app.kubernetes.io/name"]'), 6);
  });

  await t.step("missing fields resolve to their deepest parent", () => {
    assert.equal(first("spec.http[0].timeout"), 11);
    assert.equal(first("spec.gateways"), 7);
    assert.equal(first("spec.http[0].route"), 11);
    assert.equal(first("spec.http[0].route[0]"), 12);
  });

  await t.step("keys without value, and the second document", () => {
    assert.equal(second("spec.egress"), 18);
    assert.equal(second(""), 16);
  });
});
