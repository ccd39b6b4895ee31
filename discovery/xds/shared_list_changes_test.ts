import assert from "node:assert/strict";
import { SharedListChanges } from "./shared_list_changes.ts";

const itself = (name: string) => name;
const changes = () => new SharedListChanges<string, number, ReadonlySet<string>>([], (list) => new Set(list));

Deno.test("SharedListChanges holds a list by reference and the changes over it, the list's names first", () => {
  const list = Object.freeze(["a", "b", "c"]);
  const held = changes();
  held.reset(list);
  held.set("d", 1);
  held.drop("b");
  held.set("a", 2);
  assert.deepEqual(held.base, list);
  assert.deepEqual([...held.names(itself)], ["c", "d", "a"]);
  assert.deepEqual(held.size, 3);
  assert.deepEqual(held.changed("b"), null);
  assert.deepEqual(held.changed("c"), undefined);
});

Deno.test("SharedListChanges forgets a dropped name that was never listed, and restores a listed one", () => {
  const held = changes();
  held.reset(Object.freeze(["a"]));
  held.set("x", 1);
  held.drop("x");
  held.drop("y");
  assert.deepEqual(held.unchanged, true);
  assert.deepEqual(held.size, 1);
  held.drop("a");
  assert.deepEqual(held.size, 0);
  held.restore("a");
  assert.deepEqual(held.unchanged, true);
  assert.deepEqual([...held.names(itself)], ["a"]);
});

Deno.test("SharedListChanges drops every change when it takes a new list", () => {
  const held = changes();
  held.set("x", 1);
  held.reset(Object.freeze(["a", "b"]));
  assert.deepEqual(held.unchanged, true);
  assert.deepEqual(held.size, 2);
});

Deno.test("SharedListChanges changes a list again after a reset, and a reset leaves earlier reads as they were", () => {
  const held = changes();
  const list = Object.freeze(["a", "b"]);
  held.reset(list);
  assert.deepEqual([...held.changes], []);
  assert.equal(held.restore("a"), undefined);
  held.drop("a");
  held.set("z", 3);
  const before = held.changes;
  held.reset(list);
  assert.deepEqual([...before], [["a", null], ["z", 3]]);
  assert.deepEqual([...held.changes], []);
  assert.deepEqual([...held.names(itself)], ["a", "b"]);
  held.drop("b");
  held.set("y", 4);
  assert.deepEqual([...held.names(itself)], ["a", "y"]);
  assert.deepEqual(held.size, 2);
  assert.deepEqual(held.changed("b"), null);
});
