import assert from "node:assert/strict";
import { NameInterner } from "./name_interner.ts";

/** A string equal to `text` but built at run time, so it is a distinct object from any literal. */
const copyOf = (text: string) => [...text].join("");

Deno.test("NameInterner returns the first string seen for every equal name", () => {
  const interner = new NameInterner();
  const first = copyOf("outbound|8080||svc-1.ns-001.svc.cluster.local");
  assert.equal(interner.intern(first), first);
  const again = interner.internAll([copyOf(first), copyOf("other")]);
  assert.equal(again[0], first);
  assert.equal(interner.size, 2);
  assert.equal(interner.internAll(again), again, "a list it made is returned as it is");
  assert.ok(Object.isFrozen(again));
});

Deno.test("NameInterner starts afresh past its bound and still returns equal names", () => {
  const interner = new NameInterner(2);
  for (const name of ["a", "b", "c"]) interner.intern(copyOf(name));
  assert.equal(interner.size, 1, "the table was started afresh for c");
  assert.equal(interner.intern(copyOf("a")), "a");
  assert.throws(() => new NameInterner(0), /expected at least 1/);
});
