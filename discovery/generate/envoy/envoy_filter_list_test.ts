import assert from "node:assert/strict";
import type { PatchOperation } from "@mesh/shared/config/networking/envoy_filter";
import { patchList } from "./envoy_filter_list.ts";

const list = [{ name: "a" }, { name: "b" }, { name: "c" }];
const names = (operation: PatchOperation, hasMatch: boolean, target = "b") =>
  patchList(list, operation, hasMatch, (i) => i.name === target, () => ({ name: "new" }), (i) => ({
    ...i,
    merged: true,
  })).map((i) => i.merged ? `${i.name}*` : i.name);

Deno.test("patchList positions inserts beside the first match, and at the ends without a match", () => {
  assert.deepEqual(names("INSERT_BEFORE", true), ["a", "new", "b", "c"]);
  assert.deepEqual(names("INSERT_AFTER", true), ["a", "b", "new", "c"]);
  assert.deepEqual(names("INSERT_FIRST", true), ["new", "a", "b", "c"]);
  assert.deepEqual(names("INSERT_BEFORE", false), ["new", "a", "b", "c"]);
  assert.deepEqual(names("INSERT_AFTER", false), ["a", "b", "c", "new"]);
  assert.deepEqual(names("ADD", true), ["a", "b", "c", "new"]);
});

Deno.test("patchList inserts nothing when a match is asked for and none is found", () => {
  for (const op of ["INSERT_BEFORE", "INSERT_AFTER", "INSERT_FIRST", "REPLACE"] as const) {
    assert.deepEqual(names(op, true, "zz"), ["a", "b", "c"], op);
  }
});

Deno.test("patchList merges, removes and replaces matching items", () => {
  assert.deepEqual(names("MERGE", true), ["a", "b*", "c"]);
  assert.deepEqual(names("REMOVE", true), ["a", "c"]);
  assert.deepEqual(names("REPLACE", true), ["a", "new", "c"]);
  assert.deepEqual(names("REPLACE", false), ["a", "b", "c"]);
});
