import assert from "node:assert/strict";
import { NAME_ENTRY_OVERHEAD, NameInterner } from "./name_interner.ts";

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

Deno.test("NameInterner holds at most its bound in bytes, starting afresh past it", () => {
  const interner = new NameInterner(10_000);
  for (let i = 0; i < 1_000; i++) {
    interner.intern(`outbound|80||svc-${i}.${"n".repeat(100)}.svc.cluster.local`);
    assert.ok(interner.stats().bytes <= 10_000, `held ${interner.stats().bytes} bytes after ${i + 1} names`);
  }
  const entry = 1 + NAME_ENTRY_OVERHEAD;
  const small = new NameInterner(2 * entry);
  for (const name of ["a", "b", "c"]) small.intern(copyOf(name));
  assert.deepEqual(small.stats(), { entries: 1, bytes: entry, maxBytes: 2 * entry }, "afresh for c");
  assert.equal(small.intern(copyOf("a")), "a");
  const big = "x".repeat(2 * entry);
  assert.equal(small.intern(big), big, "a name bigger than the bound is returned");
  assert.equal(small.size, 2, "but not kept");
  assert.throws(() => new NameInterner(0), /expected at least 1/);
});

Deno.test("NameInterner forgets everything when cleared; names handed out stay equal", () => {
  const interner = new NameInterner();
  const kept = interner.internAll([copyOf("a"), copyOf("b")]);
  interner.clear();
  assert.deepEqual(interner.stats(), { entries: 0, bytes: 0, maxBytes: 16 * 1024 * 1024 });
  assert.deepEqual(kept, ["a", "b"]);
  assert.equal(interner.internAll(kept), kept, "a list it made is still its own");
});
