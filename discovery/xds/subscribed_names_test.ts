import assert from "node:assert/strict";
import { ListMemos } from "./list_memos.ts";
import { SubscribedNames } from "./subscribed_names.ts";

/** One server's memos, shared by the records of a test as by the connections of a server. */
const memos = new ListMemos();

const shared = (...names: string[]) => Object.freeze(names);

Deno.test("SubscribedNames keeps a first shared list by reference", () => {
  const list = shared("a", "b", "c");
  const subscribed = new SubscribedNames(memos);
  assert.equal(subscribed.adopt(list, "*"), true);
  assert.equal(subscribed.list(), list, "the very list, so caches keyed on it are shared");
  assert.equal(subscribed.size, 3);
  assert.ok(subscribed.has("b"));
  assert.equal(subscribed.has("d"), false);
  assert.equal(subscribed.adopt(shared("x"), "*"), false, "only a first subscription is adopted");
  assert.deepEqual([...subscribed], ["a", "b", "c"]);
});

Deno.test("SubscribedNames adopts only frozen lists without repeats or the wildcard", () => {
  assert.equal(new SubscribedNames(memos).adopt(["a"], "*"), false, "a list someone may change");
  assert.equal(new SubscribedNames(memos).adopt(shared("a", "a"), "*"), false);
  assert.equal(new SubscribedNames(memos).adopt(shared("a", "*"), "*"), false);
  assert.equal(new SubscribedNames(memos).adopt(shared(), "*"), false);
});

Deno.test("SubscribedNames layers later changes over the shared list without touching it", () => {
  const list = shared("a", "b", "c");
  const one = new SubscribedNames(memos), other = new SubscribedNames(memos);
  one.adopt(list, "*");
  other.adopt(list, "*");
  assert.equal(one.delete("b"), true);
  assert.equal(one.delete("b"), false, "deleting what is not subscribed says so");
  assert.equal(one.add("d"), true);
  assert.equal(one.add("a"), false, "adding what is subscribed says so");
  assert.deepEqual([...one], ["a", "c", "d"]);
  assert.equal(one.size, 3);
  assert.deepEqual([...other], ["a", "b", "c"], "the other subscriber still has the whole list");
  assert.deepEqual(list, ["a", "b", "c"]);
  const changed = one.list();
  assert.deepEqual(changed, ["a", "c", "d"]);
  assert.equal(one.list(), changed, "one list object until the next change");
  assert.ok(Object.isFrozen(changed));
  assert.equal(one.add("b"), true, "a dropped name of the list comes back");
  assert.notEqual(one.list(), changed);
  assert.deepEqual([...one].sort(), ["a", "b", "c", "d"]);
});

Deno.test("SubscribedNames tells which subscribed names a generation lacks", () => {
  const list = shared("a", "b", "c");
  const present = new Set(["a", "c"]);
  const one = new SubscribedNames(memos), other = new SubscribedNames(memos);
  one.adopt(list, "*");
  other.adopt(list, "*");
  assert.deepEqual(one.notIn(present), ["b"]);
  assert.equal(one.notIn(present), other.notIn(present), "worked out once for every subscriber of the list");
  one.add("z");
  one.delete("b");
  assert.deepEqual(one.notIn(present), ["z"]);
});

Deno.test("SubscribedNames without a shared list is a plain set", () => {
  const subscribed = new SubscribedNames(memos);
  assert.deepEqual(subscribed.list(), []);
  assert.equal(subscribed.add("a"), true);
  assert.equal(subscribed.add("b"), true);
  assert.deepEqual(subscribed.list(), ["a", "b"]);
  assert.equal(subscribed.delete("a"), true);
  assert.deepEqual(subscribed.list(), ["b"]);
  assert.equal(subscribed.size, 1);
});
