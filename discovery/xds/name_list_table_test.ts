import assert from "node:assert/strict";
import { cat, str } from "../../proto/_test_bytes.ts";
import { NameInterner } from "./name_interner.ts";
import { NameListTable } from "./name_list_table.ts";

const runOf = (...names: string[]) => cat(...names.map((n) => str(3, n)));

Deno.test("NameListTable hands every repeat of an encoded name list the same frozen list", () => {
  const interner = new NameInterner();
  const table = new NameListTable(interner);
  const first = table.listOf(runOf("a", "b", "c"));
  assert.deepEqual(first, ["a", "b", "c"]);
  assert.ok(Object.isFrozen(first));
  assert.equal(table.listOf(runOf("a", "b", "c")), first, "equal bytes, same list");
  assert.notEqual(table.listOf(runOf("a", "b", "d")), first, "a different last name is another list");
  assert.deepEqual(table.listOf(runOf("c", "b", "a")), ["c", "b", "a"], "order is part of the list");
  assert.equal(interner.internAll(first), first, "the interner knows the list as its own");
  assert.equal(table.size, 3);
});

Deno.test("NameListTable keeps its own copy of the bytes it was given", () => {
  const table = new NameListTable(new NameInterner());
  const run = runOf("x", "y");
  const list = table.listOf(run);
  run.fill(0);
  assert.equal(table.listOf(runOf("x", "y")), list);
});

Deno.test("NameListTable starts afresh past its bounds and still decodes correctly", () => {
  const byCount = new NameListTable(new NameInterner(), { maxLists: 2 });
  for (const name of ["a", "b", "c"]) byCount.listOf(runOf(name));
  assert.equal(byCount.size, 1);
  const byBytes = new NameListTable(new NameInterner(), { maxBytes: 10 });
  byBytes.listOf(runOf("12345"));
  assert.deepEqual(byBytes.listOf(runOf("67890")), ["67890"]);
  assert.equal(byBytes.size, 1);
  assert.throws(() => new NameListTable(new NameInterner(), { maxLists: 0 }), /expected at least 1/);
});
