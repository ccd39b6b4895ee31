import assert from "node:assert/strict";
import { flowNestingProblem, MAX_FLOW_NESTING } from "./yaml_nesting.ts";
import { loadConfigText, loadConfigTextSliced } from "./config_file_load.ts";

Deno.test("flowNestingProblem finds flow collections nested past the limit, with their line", () => {
  assert.deepEqual(flowNestingProblem("a: 1\nb: " + "[".repeat(4) + "1" + "]".repeat(4), 3), {
    line: 2,
    maxDepth: 3,
  });
  assert.equal(flowNestingProblem("b: " + "[{a: ".repeat(2) + "1" + "}]".repeat(2), 4), undefined);
});

Deno.test("flowNestingProblem ignores brackets in quoted scalars and comments, not apostrophes in words", () => {
  const text = [
    `a: "[[[[[[ \\" [[[["`,
    `b: '[[[[[[ '' [[[['`,
    `c: x # [[[[[[[[`,
    `d: don't [1]`,
    `e: {f: [g]}`,
  ].join("\n");
  assert.equal(flowNestingProblem(text, 2), undefined);
  assert.deepEqual(flowNestingProblem(text + "\nh: [[[1]]]", 2), { line: 6, maxDepth: 2 });
});

Deno.test("A config file nesting flow collections past the limit is refused unparsed, naming the line", async () => {
  const text = "apiVersion: networking.mesh.io/v1beta1\nkind: VirtualService\nmetadata: {name: deep}\n" +
    "spec: {hosts: [a], http: " + "[{a: ".repeat(5_000) + "1" + "}]".repeat(5_000) + "}\n";
  for (
    const load of [
      await loadConfigTextSliced("deep.yaml", text, "ns"),
      loadConfigText("deep.yaml", text, "ns"),
    ]
  ) {
    assert.equal(load.unreadable, true);
    assert.deepEqual(load.documents, []);
    assert.deepEqual(load.rejections.map((r) => [r.reason, r.line, r.errors]), [[
      "yaml_decode_error",
      4,
      [`deep.yaml:4: YAML nesting: flow collections ([ or {) nest deeper than ${MAX_FLOW_NESTING} levels; the file is refused unparsed`],
    ]]);
  }
});
