import assert from "node:assert/strict";
import { type FileLoad, loadConfigText, loadConfigTextSliced } from "./config_file_load.ts";
import { loadConfigOffThread, OFF_THREAD_BYTES, type OffThreadRequest } from "./yaml_off_thread.ts";

/** A ServiceEntry with `n` endpoints, one document, its last weight invalid when `badWeight`. */
function bigEntry(n: number, badWeight = false): string {
  const endpoints = Array.from({ length: n }, (_, i) => `  - address: 10.0.${i >> 8 & 255}.${i & 255}\n`);
  if (badWeight) endpoints[n - 1] += "    weight: -1\n";
  return "apiVersion: networking.mesh.io/v1beta1\nkind: ServiceEntry\nmetadata: {name: big, namespace: ns}\n" +
    "spec:\n  hosts: [big.example.com]\n  ports: [{number: 80, name: http}]\n  resolution: STATIC\n" +
    "  endpoints:\n" + endpoints.join("");
}

const here = (r: OffThreadRequest): FileLoad => {
  throw new Error(`The worker failed on ${r.file}`);
};

Deno.test("The event loop keeps turning while a worker loads one large document", async () => {
  let turned = false;
  const probe = setTimeout(() => turned = true, 0);
  const load = await loadConfigOffThread(
    { file: "big.yaml", text: bigEntry(20_000), defaultNamespace: "ns" },
    here,
  );
  clearTimeout(probe);
  assert.equal(turned, true);
  assert.equal(load.documents.length, 1);
});

Deno.test("A config file past the off-thread size loads as loadConfigText loads it, problem lines included", async () => {
  for (const text of [bigEntry(10_000), bigEntry(10_000, true), `${bigEntry(10_000)}---\n[unclosed\n`]) {
    assert.ok(text.length >= OFF_THREAD_BYTES);
    assert.deepEqual(
      await loadConfigTextSliced("big.yaml", text, "ns"),
      loadConfigText("big.yaml", text, "ns"),
    );
  }
  const refused = await loadConfigOffThread(
    { file: "big.yaml", text: bigEntry(10_000, true), defaultNamespace: "ns" },
    here,
  );
  assert.match(refused.rejections[0].errors[0], /^big\.yaml:10009: spec\.endpoints\[9999\]\.weight/);
});

Deno.test("A worker's answer of many documents comes in parts, each asked for after a turn of the loop", async () => {
  const text = Array.from(
    { length: 1_000 },
    (_, i) =>
      `apiVersion: networking.mesh.io/v1beta1\nkind: WorkloadEntry\nmetadata: {name: we-${i}, namespace: ns}\n` +
      `spec: {address: 10.0.${i >> 8}.${i & 255}, labels: {app: a${i % 7}}}\n`,
  ).join("---\n") + "---\nkind: Nonsense\n";
  const parts: number[] = [];
  const load = await loadConfigOffThread(
    { file: "wes.yaml", text, defaultNamespace: "ns", documentsPerPart: 300 },
    here,
    { onPart: (documents) => parts.push(documents) },
  );
  assert.deepEqual(parts, [300, 300, 300, 100]);
  assert.deepEqual(load, loadConfigText("wes.yaml", text, "ns"));
});

Deno.test("One document with a large array comes in several bounded messages, stitched equal to the original", async () => {
  const routes = Array.from(
    { length: 3_000 },
    (_, i) => `  - match: [{uri: {prefix: /p${i}}}]\n    route: [{destination: {host: a.example.com}}]\n`,
  );
  const text =
    "apiVersion: networking.mesh.io/v1beta1\nkind: VirtualService\nmetadata: {name: big, namespace: ns}\n" +
    "spec:\n  hosts: [a.example.com]\n  http:\n" + routes.join("") + " ".repeat(OFF_THREAD_BYTES);
  const parts: number[] = [];
  const pieces: number[] = [];
  const load = await loadConfigOffThread(
    { file: "vs.yaml", text, defaultNamespace: "ns", nodesPerPiece: 5_000 },
    here,
    { onPart: (documents) => parts.push(documents), onPiece: (items) => pieces.push(items) },
  );
  assert.deepEqual(parts, [1]);
  assert.ok(pieces.length >= 5, `${pieces.length} pieces`);
  assert.equal(pieces.reduce((a, b) => a + b, 0), 3_000);
  assert.deepEqual(load, loadConfigText("vs.yaml", text, "ns"));
});
