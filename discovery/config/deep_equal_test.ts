import assert from "node:assert/strict";
import fc from "fast-check";
import { deepEqual } from "./deep_equal.ts";

/** Equality by canonical JSON (keys sorted, undefined properties dropped): the meaning deepEqual must have. */
function canonical(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, v) =>
      v !== null && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]))
        : v,
  );
}

Deno.test("deepEqual agrees with canonical JSON on JSON values", () => {
  fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
    assert.equal(deepEqual(a, b), canonical(a) === canonical(b));
  }));
  fc.assert(fc.property(fc.jsonValue(), (a) => deepEqual(a, structuredClone(a))));
});

Deno.test("deepEqual ignores key order and undefined properties, not arrays against objects", () => {
  assert.ok(deepEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }));
  assert.ok(deepEqual({ a: 1, gone: undefined }, { a: 1 }));
  assert.ok(deepEqual({ a: 1 }, { a: 1, gone: undefined }));
  assert.ok(!deepEqual({ a: 1 }, { a: 1, b: null }));
  assert.ok(!deepEqual({ a: 1, b: 2 }, { a: 1, c: 2 }));
  assert.ok(!deepEqual([1, 2], { 0: 1, 1: 2 }));
  assert.ok(!deepEqual([1, [2]], [1, [3]]));
  assert.ok(deepEqual(10n, 10n));
  assert.ok(!deepEqual(Number.NaN, 0) && deepEqual(Number.NaN, Number.NaN));
});
