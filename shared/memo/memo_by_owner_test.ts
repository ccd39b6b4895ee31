import assert from "node:assert/strict";
import { memoByOwner } from "./memo_by_owner.ts";

Deno.test("memoByOwner computes once per owner and key, and keeps owners apart", () => {
  const memo = memoByOwner<object, string, number>();
  const [a, b] = [{}, {}];
  let computed = 0;
  const value = (owner: object, key: string) => memo(owner, key, () => ++computed);
  assert.equal(value(a, "x"), 1);
  assert.equal(value(a, "x"), 1, "the same pair is not computed again");
  assert.equal(value(a, "y"), 2);
  assert.equal(value(b, "x"), 3, "another owner has its own values");
  const undef = memoByOwner<object, string, undefined>();
  let calls = 0;
  undef(a, "k", () => void calls++);
  undef(a, "k", () => void calls++);
  assert.equal(calls, 1, "a remembered undefined counts as remembered");
});
