import assert from "node:assert/strict";
import { DependencyIndex } from "./dependency_index.ts";

Deno.test("A dependency index finds the dependents of a key as they last filed what they read", () => {
  const index = new DependencyIndex();
  index.set("shop/ratings", new Set(["node-a", "node-b"]));
  index.set("shop/reviews", new Set(["node-b"]));
  assert.deepEqual(index.dependents("node-b").sort(), ["shop/ratings", "shop/reviews"]);
  index.set("shop/ratings", new Set(["node-c"]));
  assert.deepEqual(index.dependents("node-a"), []);
  assert.deepEqual(index.dependents("node-b"), ["shop/reviews"]);
  assert.deepEqual(index.dependents("node-c"), ["shop/ratings"]);
});

Deno.test("A dependency index keeps no key whose last dependent went", () => {
  const index = new DependencyIndex();
  index.set("shop/ratings", new Set(["node-a"]));
  index.set("shop/ratings", new Set());
  index.set("shop/reviews", new Set(["node-b"]));
  index.set("shop/reviews", new Set(["node-c"]));
  assert.equal(index.keyCount, 1);
});
