import assert from "node:assert/strict";
import { FrozenMap } from "./frozen_map.ts";

Deno.test("FrozenMap holds what it was built with and refuses every change", () => {
  const map = new FrozenMap([["a", 1], ["b", 2]]);
  assert.deepEqual([...map], [["a", 1], ["b", 2]]);
  assert.ok(Object.isFrozen(map));
  assert.throws(() => map.set("c", 3), TypeError);
  assert.throws(() => map.delete("a"), TypeError);
  assert.throws(() => map.clear(), TypeError);
  assert.deepEqual([...map], [["a", 1], ["b", 2]]);
});
