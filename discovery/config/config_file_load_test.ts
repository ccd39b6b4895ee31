import assert from "node:assert/strict";
import fc from "fast-check";
import { configText } from "../../tests/fuzz/fuzz_properties.ts";
import { loadConfigText, loadConfigTextSliced } from "./config_file_load.ts";

const GOOD_VS = `apiVersion: networking.istio.io/v1alpha3
kind: VirtualService
metadata:
  name: reviews
spec:
  hosts:
  - reviews.example.svc.cluster.local
  http:
  - route:
    - destination:
        host: reviews.example.svc.cluster.local
`;

const BAD_WEIGHT_VS = `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata:
  name: ratings
  namespace: shop
spec:
  hosts:
  - ratings
  http:
  - route:
    - destination:
        host: ratings
      weight: 120
    - destination:
        host: ratings-v2
`;

const GOOD_DR = `apiVersion: networking.mesh.io/v1beta1
kind: DestinationRule
metadata:
  name: reviews
  namespace: shop
spec:
  host: reviews
  subsets:
  - name: v1
    labels:
      version: v1
`;

Deno.test("loadConfigText validates each document of a stream on its own", async (t) => {
  const text = `${GOOD_VS}---\n${BAD_WEIGHT_VS}---\n${GOOD_DR}`;
  const load = loadConfigText("cfg/all.yaml", text, "default");

  await t.step("good documents load, with the default namespace and the canonical group", () => {
    assert.equal(load.unreadable, false);
    assert.deepEqual(load.documents.map((d) => d.key), [
      "VirtualService/default/reviews",
      "DestinationRule/shop/reviews",
    ]);
    assert.equal(load.documents[0].resource.gvk.group, "networking.mesh.io");
    assert.deepEqual(load.documents.map((d) => [d.line, d.slot]), [[1, "0"], [29, "2"]]);
  });

  await t.step("the bad document is rejected with its identity, line and the offending field's line", () => {
    assert.equal(load.rejections.length, 1);
    const [r] = load.rejections;
    assert.equal(r.line, 13);
    assert.equal(r.slot, "1");
    assert.equal(r.key, "VirtualService/shop/ratings");
    assert.equal(r.reason, "invalid_config");
    assert.equal(r.group, "networking.mesh.io");
    assert.equal(r.version, "v1beta1");
    assert.ok(
      r.errors.some((e) => /^cfg\/all\.yaml:25: spec\.http\[0\]\.route\[0\]\.weight: /.test(e)),
      r.errors.join("\n"),
    );
  });
});

Deno.test("loadConfigText points unknown fields at the key's line", () => {
  const text = GOOD_DR.replace("  host: reviews\n", "  host: reviews\n  hostt: typo\n");
  const load = loadConfigText("dr.yaml", text, "default");
  assert.equal(load.documents.length, 0);
  assert.match(load.rejections[0].errors[0], /^dr\.yaml:8: spec\.hostt: unknown field "hostt"/);
});

Deno.test("loadConfigText marks a file with a YAML syntax error unreadable", () => {
  const text = `${GOOD_VS}---\napiVersion: networking.mesh.io/v1beta1\nkind: Gateway\nmetadata: {name: [\n`;
  const load = loadConfigText("half.yaml", text, "default");
  assert.equal(load.unreadable, true);
  assert.deepEqual(load.documents, []);
  assert.equal(load.rejections.length, 1);
  assert.equal(load.rejections[0].slot, "*");
  assert.equal(load.rejections[0].reason, "yaml_decode_error");
  assert.match(load.rejections[0].errors[0], /^half\.yaml:\d+:\d+: YAML syntax error: /);
});

Deno.test("loadConfigText reads the items of a List", async (t) => {
  const list = `apiVersion: v1
kind: List
items:
- apiVersion: networking.mesh.io/v1beta1
  kind: Sidecar
  metadata: {name: default, namespace: shop}
  spec:
    egress:
    - hosts: ["./*"]
- apiVersion: networking.mesh.io/v1beta1
  kind: Sidecar
  metadata: {name: broken, namespace: shop}
  spec:
    egress:
    - hosts: ["./*"]
      bogus: true
`;
  const load = loadConfigText("list.json", list, "default");
  await t.step("valid items load with their own line", () => {
    assert.deepEqual(load.documents.map((d) => [d.key, d.line, d.slot]), [[
      "Sidecar/shop/default",
      4,
      "0.items[0]",
    ]]);
  });
  await t.step("an invalid item is rejected alone, with a line inside the item", () => {
    assert.equal(load.rejections.length, 1);
    assert.equal(load.rejections[0].line, 10);
    assert.match(load.rejections[0].errors[0], /^list\.json:16: spec\.egress\[0\]\.bogus: unknown field/);
  });
  await t.step("a List without items is rejected", () => {
    const bad = loadConfigText("l.yaml", "apiVersion: v1\nkind: List\nitems: 3\n", "default");
    assert.equal(bad.rejections.length, 1);
    assert.match(bad.rejections[0].errors[0], /^l\.yaml:3: items: /);
  });
});

Deno.test("loadConfigText reads JSON files and reports unknown kinds as unknown_type", () => {
  const json = JSON.stringify({
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "Ingress",
    metadata: { name: "x" },
    spec: {},
  });
  const load = loadConfigText("x.json", json, "default");
  assert.equal(load.rejections[0].reason, "unknown_type");
  assert.equal(load.rejections[0].kind, "Ingress");
});

Deno.test("loadConfigText rejects a document that is not a resource and skips empty ones", () => {
  const load = loadConfigText("odd.yaml", "---\n# only a comment\n---\n- 1\n- 2\n", "default");
  assert.equal(load.documents.length, 0);
  assert.equal(load.rejections.length, 1);
  assert.equal(load.rejections[0].key, undefined);
  assert.match(load.rejections[0].errors[0], /^odd\.yaml:4: a resource must be an object/);
});

Deno.test("loadConfigTextSliced gives loadConfigText's result while yielding between documents", async () => {
  const plain = (load: unknown) => JSON.parse(JSON.stringify(load));
  await fc.assert(
    fc.asyncProperty(configText, async (text) => {
      const sync = loadConfigText("/f.yaml", text, "default");
      const sliced = await loadConfigTextSliced("/f.yaml", text, "default");
      if (JSON.stringify(plain(sync)) !== JSON.stringify(plain(sliced))) {
        throw new Error("the sliced load differs");
      }
    }),
    { numRuns: 300, seed: 7 },
  );
  const big = Array.from({ length: 3000 }, (_, i) =>
    `apiVersion: networking.mesh.io/v1beta1
kind: ServiceEntry
metadata: {name: s${i}, namespace: shop}
spec: {hosts: [s${i}.example.com], location: MESH_EXTERNAL, resolution: DNS, ports: [{number: 80, name: http, protocol: HTTP}]}
`).join("---\n");
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 0);
  const load = await loadConfigTextSliced("/big.yaml", big, "default");
  clearInterval(ticker);
  assert.equal(load.documents.length, 3000);
  assert.ok(ticks > 0, "timers ran while the file was parsed");
});

Deno.test("loadConfigText reports at most 10 errors of a document, quoting no field name whole", () => {
  const fields = Array.from({ length: 15 }, (_, i) => `secret${i}:${"s".repeat(80)}: 1`).join("\n");
  const text = `apiVersion: networking.mesh.io/v1beta1\nkind: ServiceEntry\nmetadata: {name: a}\n${fields}\n`;
  const [rejection] = loadConfigText("x.yaml", text, "default").rejections;
  assert.equal(rejection.errors.length, 11);
  assert.match(rejection.errors[10], /^… and \d+ more errors$/);
  assert.ok(rejection.errors.every((e) => !e.includes("s".repeat(40))), rejection.errors.join("\n"));
});
