import assert from "node:assert/strict";
import { memoByIdentity } from "./memo_by_identity.ts";

Deno.test("memoByIdentity computes once per object, by identity, falsy values included", () => {
  const calls: unknown[] = [];
  const isEmpty = memoByIdentity((list: readonly number[]) => {
    calls.push(list);
    return list.length === 0;
  });
  const empty: number[] = [];
  const full = [1];
  assert.equal(isEmpty(empty), true);
  assert.equal(isEmpty(full), false);
  assert.equal(isEmpty(full), false, "a remembered false is not computed again");
  assert.equal(isEmpty(empty), true);
  assert.equal(isEmpty([]), true, "an equal list that is another object is computed for itself");
  assert.deepEqual(calls, [empty, full, []]);
});
