import assert from "node:assert/strict";
import { cat, str } from "@mesh/proto/_test_bytes";
import { NameInterner } from "./name_interner.ts";
import { NameListTable } from "./name_list_table.ts";
import { NameLimitError } from "./name_budget.ts";
import * as grpc from "@grpc/grpc-js";

const runOf = (...names: string[]) => cat(...names.map((n) => str(3, n)));

/** The NameLimitError `refused` throws. */
function refusal(refused: () => unknown): NameLimitError {
  try {
    refused();
  } catch (error) {
    if (error instanceof NameLimitError) return error;
    throw error;
  }
  throw new assert.AssertionError({ message: "Expected a NameLimitError" });
}

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

Deno.test("NameListTable holds at most its bound in bytes, starting afresh past it", () => {
  const byCount = new NameListTable(new NameInterner(), { maxLists: 2 });
  for (const name of ["a", "b", "c"]) byCount.listOf(runOf(name));
  assert.equal(byCount.size, 1);
  const table = new NameListTable(new NameInterner(), { maxBytes: 4_000 });
  for (let i = 0; i < 200; i++) {
    const list = table.listOf(runOf(`name-${i}`, `other-${i}`));
    assert.deepEqual(list, [`name-${i}`, `other-${i}`]);
    assert.ok(table.stats().bytes <= 4_000, `held ${table.stats().bytes} bytes after ${i + 1} lists`);
  }
  const names = Array.from({ length: 500 }, (_, i) => `n${i}`);
  assert.deepEqual(table.listOf(runOf(...names)), names, "a list bigger than the bound is decoded, not kept");
  assert.ok(table.stats().bytes <= 4_000);
  table.clear();
  assert.deepEqual(table.stats(), { entries: 0, bytes: 0, maxBytes: 4_000 });
  assert.throws(() => new NameListTable(new NameInterner(), { maxLists: 0 }), /expected at least 1/);
});

Deno.test("NameListTable refuses a list over the name limits before keeping any of it", () => {
  const interner = new NameInterner();
  const limits = { maxNameLength: 8, maxNamesPerStream: 3, maxNameCharsPerConnection: 12 };
  const table = new NameListTable(interner, { limits });
  const long = refusal(() => table.listOf(runOf("a", "123456789")));
  assert.equal(long.code, grpc.status.INVALID_ARGUMENT);
  assert.match(long.message, /9 characters .* limit of 8 \(DISCOVERY_XDS_MAX_NAME_LENGTH\)/);
  const many = refusal(() => table.listOf(runOf("a", "b", "c", "d")));
  assert.equal(many.code, grpc.status.RESOURCE_EXHAUSTED);
  assert.match(many.message, /4 names .* limit of 3 \(DISCOVERY_XDS_MAX_NAMES_PER_STREAM\)/);
  const chars = refusal(() => table.listOf(runOf("1234567", "1234567")));
  assert.match(chars.message, /14 characters .* limit of 12 \(DISCOVERY_XDS_MAX_NAME_CHARS_PER_CONNECTION\)/);
  assert.equal(table.size, 0);
  assert.equal(interner.size, 0, "no name of a refused list was kept");
  assert.deepEqual(table.listOf(runOf("a", "12345678")), ["a", "12345678"], "at the limits is accepted");
});
