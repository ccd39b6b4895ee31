import assert from "node:assert/strict";
import { joinFieldPath, parseFieldPath, parseYamlDocuments } from "./yaml_documents.ts";

const STREAM = `# leading comment
apiVersion: v1
metadata:
  labels:
    "app.mesh.io/name": x
spec:
  http:
  - route:
    - destination:
        host: a
    - weight: 10
---
---
kind: Second
`;

Deno.test("parseYamlDocuments maps documents and field paths to lines", async (t) => {
  const { documents, errors } = parseYamlDocuments(STREAM);

  await t.step("non-empty documents with their index and first line", () => {
    assert.deepEqual(errors, []);
    assert.deepEqual(documents.map((d) => [d.index, d.line]), [[0, 2], [2, 14]]);
    assert.deepEqual(documents[1].value, { kind: "Second" });
  });

  await t.step("paths resolve to the key's or item's line", () => {
    const [doc] = documents;
    assert.equal(doc.lineOf("spec.http[0].route[1].weight"), 11);
    assert.equal(doc.lineOf("spec.http[0].route[0].destination.host"), 10);
    assert.equal(doc.lineOf('metadata.labels["app.mesh.io/name"]'), 5);
    assert.equal(doc.lineOf("spec.http[0]"), 8);
  });

  await t.step("absent fields resolve to their deepest existing ancestor", () => {
    assert.equal(documents[0].lineOf("spec.http[3].route"), 7);
    assert.equal(documents[0].lineOf("spec.tcp"), 6);
    assert.equal(documents[0].lineOf(""), 2);
  });
});

Deno.test("parseYamlDocuments reports syntax errors with line and column", () => {
  const { errors } = parseYamlDocuments("a: 1\nb: [1, 2\n");
  assert.equal(errors.length > 0, true);
  assert.equal(errors[0].line, 3);
  assert.match(errors[0].message, /Flow sequence/);
  assert.equal(parseYamlDocuments("a: 1\na: 2\n").errors[0].message, "Map keys must be unique");
});

Deno.test("parseFieldPath and joinFieldPath read and build paths", () => {
  assert.deepEqual(parseFieldPath('spec.http[0].headers["x.y"].set'), [
    "spec",
    "http",
    0,
    "headers",
    "x.y",
    "set",
  ]);
  assert.deepEqual(parseFieldPath(""), []);
  assert.equal(parseFieldPath("a[x]"), undefined);
  assert.equal(joinFieldPath("items[2]", "spec.hosts"), "items[2].spec.hosts");
  assert.equal(joinFieldPath("items[2]", "[1]"), "items[2][1]");
  assert.equal(joinFieldPath("", "spec"), "spec");
  assert.equal(joinFieldPath("items[0]", ""), "items[0]");
});
