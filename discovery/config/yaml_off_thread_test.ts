import assert from "node:assert/strict";
import { parseYamlDocuments } from "../../shared/config/mesh/yaml_documents.ts";
import { loadConfigText, loadConfigTextSliced } from "./config_file_load.ts";
import { OFF_THREAD_BYTES, parseYamlOffThread } from "./yaml_off_thread.ts";

/** A ServiceEntry with `n` endpoints, one document, its weight field invalid when `badWeight`. */
function bigEntry(n: number, badWeight = false): string {
  const endpoints = Array.from({ length: n }, (_, i) => `  - address: 10.0.${i >> 8 & 255}.${i & 255}\n`);
  if (badWeight) endpoints[n - 1] += "    weight: -1\n";
  return "apiVersion: networking.mesh.io/v1beta1\nkind: ServiceEntry\nmetadata: {name: big, namespace: ns}\n" +
    "spec:\n  hosts: [big.example.com]\n  ports: [{number: 80, name: http}]\n  resolution: STATIC\n" +
    "  endpoints:\n" + endpoints.join("");
}

Deno.test("parseYamlOffThread gives what parseYamlDocuments gives, field lines included", async () => {
  const text = "a: 1\n---\n# nothing\n---\nb:\n  c: [1, 2]\n  d: x\n";
  const [there, here] = [await parseYamlOffThread(text), parseYamlDocuments(text)];
  assert.deepEqual(there.errors, here.errors);
  assert.deepEqual(
    there.documents.map((d) => [d.index, d.line, d.value, d.lineOf(""), d.lineOf("c[1]"), d.lineOf("d")]),
    here.documents.map((d) => [d.index, d.line, d.value, d.lineOf(""), d.lineOf("c[1]"), d.lineOf("d")]),
  );
  const broken = "a: [1\n";
  assert.deepEqual((await parseYamlOffThread(broken)).errors, parseYamlDocuments(broken).errors);
});

Deno.test("The event loop keeps turning while a worker parses one large document", async () => {
  const text = bigEntry(20_000);
  let turned = false;
  const probe = setTimeout(() => turned = true, 0);
  const stream = await parseYamlOffThread(text);
  clearTimeout(probe);
  assert.equal(turned, true);
  assert.equal(
    (stream.documents[0].value as { spec: { endpoints: unknown[] } }).spec.endpoints.length,
    20_000,
  );
});

Deno.test("A config file past the off-thread size loads as loadConfigText loads it, problem lines included", async () => {
  for (const text of [bigEntry(10_000), bigEntry(10_000, true)]) {
    assert.ok(text.length >= OFF_THREAD_BYTES);
    const sliced = await loadConfigTextSliced("big.yaml", text, "ns");
    const whole = loadConfigText("big.yaml", text, "ns");
    assert.deepEqual(sliced, whole);
  }
  const refused = await loadConfigTextSliced("big.yaml", bigEntry(10_000, true), "ns");
  assert.match(refused.rejections[0].errors[0], /^big\.yaml:10009: spec\.endpoints\[9999\]\.weight/);
});
