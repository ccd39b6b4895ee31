import assert from "node:assert/strict";
import { attachPiece, countNodes, detachLargeArrays } from "./large_array_pieces.ts";

/** Rebuilds a detached value by applying its pieces in order, as the receiving thread does. */
function stitch(value: unknown, pieces: Parameters<typeof attachPiece>[1][]): unknown {
  const root = structuredClone(value);
  for (const piece of pieces) attachPiece(root, structuredClone(piece));
  return root;
}

Deno.test("detachLargeArrays cuts nested large arrays into pieces of at most the budget that stitch back equal", () => {
  const value = {
    name: "big",
    small: [1, 2, 3],
    http: Array.from({ length: 500 }, (_, i) => ({
      match: [{ uri: { prefix: `/p${i}` } }],
      headers: i === 7 ? Array.from({ length: 300 }, (_, j) => `h${j}`) : [],
    })),
    when: new Date(0),
  };
  const { value: cut, pieces } = detachLargeArrays(value, 200);
  assert.deepEqual((cut as typeof value).http, []);
  assert.deepEqual((cut as typeof value).small, [1, 2, 3]);
  assert.ok(pieces.length > 10);
  for (const piece of pieces) assert.ok(piece.items.length === 1 || countNodes(piece.items) <= 201);
  assert.deepEqual(stitch(cut, [...pieces]), value);
});

Deno.test("detachLargeArrays leaves a value within the budget whole, with no pieces", () => {
  const value = { spec: { hosts: ["a", "b"], http: [{ route: [] }] } };
  const { value: cut, pieces } = detachLargeArrays(value, 100);
  assert.equal(cut, value);
  assert.deepEqual(pieces, []);
});

Deno.test("attachPiece refuses a path that does not lead to an array", () => {
  assert.throws(() => attachPiece({ a: { b: 1 } }, { path: ["a"], items: [1] }), TypeError);
});
