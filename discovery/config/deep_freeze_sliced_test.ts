import assert from "node:assert/strict";
import { LoopSlices } from "@mesh/shared/time/loop_slices";
import { deepFreezeSliced } from "./deep_freeze_sliced.ts";

/** Every object reachable from `value`, each once. */
function objectsOf(value: unknown, out = new Set<object>()): Set<object> {
  if (value !== null && typeof value === "object" && !out.has(value)) {
    out.add(value);
    for (const child of Object.values(value)) objectsOf(child, out);
  }
  return out;
}

/** A route table of `n` routes, as a large VirtualService spec has. */
function routes(n: number) {
  return {
    hosts: ["a.example"],
    http: Array.from({ length: n }, (_, i) => ({
      match: [{ uri: { prefix: `/p${i}` } }],
      route: [{ destination: { host: "a.example" } }],
    })),
  };
}

Deno.test("deepFreezeSliced freezes a large value across turns of the loop, children before parents", async () => {
  const spec = routes(5_000);
  let now = 0;
  // Every look at the clock spends a whole slice: the freeze pauses at each chance it takes.
  const slices = new LoopSlices(1, () => now++);
  let turns = 0;
  const watch = setInterval(() => {
    turns++;
    for (const object of objectsOf(spec)) {
      if (!Object.isFrozen(object)) continue;
      for (const child of Object.values(object)) {
        if (child !== null && typeof child === "object") {
          assert.ok(Object.isFrozen(child), "a frozen object's children are frozen at every turn");
        }
      }
    }
  }, 0);
  try {
    await deepFreezeSliced(spec, slices);
  } finally {
    clearInterval(watch);
  }
  assert.ok(turns > 1, `the loop got ${turns} turns`);
  for (const object of objectsOf(spec)) assert.ok(Object.isFrozen(object));
});

Deno.test("deepFreezeSliced takes a shared or self-holding node once and leaves frozen subtrees alone", async () => {
  const shared: Record<string, unknown> = { labels: { app: "x" } };
  shared.self = shared;
  const frozen = Object.freeze({ keep: {} });
  const value = { a: shared, b: shared, c: frozen };
  await deepFreezeSliced(value, new LoopSlices());
  assert.ok(Object.isFrozen(value) && Object.isFrozen(shared) && Object.isFrozen(shared.labels));
  assert.equal(Object.isFrozen(frozen.keep), false, "a frozen object is taken as frozen through");
});
