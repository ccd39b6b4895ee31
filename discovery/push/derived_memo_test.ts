import assert from "node:assert/strict";
import { DerivedMemo, derivedTable } from "./derived_memo.ts";

const LENGTHS = derivedTable<object, string, number>("lengths");

Deno.test("A derived memo computes a value once per owner and key, and counts it by table name", () => {
  const memo = new DerivedMemo();
  const owner = {};
  let computed = 0;
  const compute = () => ++computed;
  assert.equal(memo.get(LENGTHS, owner, "a", compute), 1);
  assert.equal(memo.get(LENGTHS, owner, "a", compute), 1, "remembered");
  assert.equal(memo.get(LENGTHS, owner, "b", compute), 2, "another key");
  assert.equal(memo.get(LENGTHS, {}, "a", compute), 3, "another owner");
  assert.deepEqual(memo.stats(), { lengths: 3 });
});

Deno.test("Two derived memos (two snapshots) share no entry", () => {
  const [one, other] = [new DerivedMemo(), new DerivedMemo()];
  const owner = {};
  one.get(LENGTHS, owner, "a", () => 1);
  assert.equal(other.get(LENGTHS, owner, "a", () => 2), 2);
  assert.deepEqual([one.stats(), other.stats()], [{ lengths: 1 }, { lengths: 1 }]);
});

Deno.test("A derived memo remembers an undefined value", () => {
  const memo = new DerivedMemo();
  const table = derivedTable<object, undefined, undefined>("nothing");
  let computed = 0;
  const owner = {};
  memo.get(table, owner, undefined, () => void computed++);
  memo.get(table, owner, undefined, () => void computed++);
  assert.equal(computed, 1);
});

Deno.test("The next snapshot's memo keeps the carried tables and starts the others empty", () => {
  const carried = derivedTable<object, string, number>("digests", { carried: true });
  const owner = {};
  const first = new DerivedMemo();
  first.get(carried, owner, "a", () => 1);
  first.get(LENGTHS, owner, "a", () => 1);
  const next = first.successor();
  assert.equal(next.get(carried, owner, "a", () => 2), 1, "a carried value is not worked out again");
  assert.equal(next.get(LENGTHS, owner, "a", () => 2), 2, "a snapshot's own table starts empty");
});
