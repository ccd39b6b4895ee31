import assert from "node:assert/strict";
import { deepValue, MAX_NESTING } from "./nesting.ts";

/** `{a: {a: … 1}}`, `depth` objects deep. */
const nested = (depth: number) => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};

Deno.test("deepValue accepts objects and arrays nested to the bound and names the first container past it", () => {
  assert.equal(deepValue(nested(MAX_NESTING)), undefined);
  assert.equal(deepValue({ spec: nested(MAX_NESTING - 1) }), undefined);
  // The document is one level, spec a second: the hundred-and-first container is spec's 99th `a`.
  assert.deepEqual(deepValue({ spec: nested(MAX_NESTING) }), {
    path: `spec${".a".repeat(99)}`,
    maxDepth: 100,
  });
  assert.deepEqual(deepValue({ s: "x", n: 1, list: [1, 2, [3]] }, 2), { path: "list[2]", maxDepth: 2 });
  assert.equal(deepValue({ s: "x", n: null, list: [1, 2, [3]] }, 3), undefined);
});

Deno.test("deepValue walks a value nested a million levels without recursing", () => {
  // Recursive walks and the runtime's structured clone give up between 2,000 and 3,000 levels.
  assert.deepEqual(deepValue(nested(1_000_000)), { path: "a".concat(".a".repeat(99)), maxDepth: 100 });
});
