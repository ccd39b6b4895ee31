import assert from "node:assert/strict";
import { withoutNullFields } from "./null_fields.ts";

Deno.test("withoutNullFields leaves out null fields at any depth, keeps list items, and copies only what changes", () => {
  const untouched = { a: { b: [1, { c: "x" }] } };
  const value = { keep: untouched, gone: null, list: [null, { d: null, e: 0 }], deep: { f: { g: null } } };
  assert.deepEqual(withoutNullFields(value), { keep: untouched, list: [null, { e: 0 }], deep: { f: {} } });
  assert.equal((withoutNullFields(value) as typeof value).keep, untouched, "an unchanged part is not copied");
  assert.equal(withoutNullFields(untouched), untouched);
  assert.deepEqual(value.deep, { f: { g: null } }, "the input is not modified");
});

Deno.test("withoutNullFields keeps a Struct field whole, null values and all", () => {
  const struct = { a: null, b: { c: null } };
  const holdsStruct = (path: readonly (string | number)[]) => path.join(".") === "patches.0.value";
  assert.deepEqual(
    withoutNullFields({ patches: [{ value: struct, other: null }] }, holdsStruct),
    { patches: [{ value: struct }] },
  );
});
