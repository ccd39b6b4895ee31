import assert from "node:assert/strict";
import { HeldVersions } from "./held_versions.ts";
import { ListMemos } from "./list_memos.ts";
import { VersionedResource } from "./versioned_resource.ts";

/** One server's memos, shared by the records of a test as by the connections of a server. */
const memos = new ListMemos();

const resource = (name: string, byte = 1) => new VersionedResource(name, new Uint8Array([byte]));

Deno.test("HeldVersions starts from the versions the proxy reported", () => {
  const held = new HeldVersions(memos, { a: "v1" });
  assert.equal(held.get("a"), "v1");
  assert.equal(held.has("b"), false);
  assert.deepEqual([...held.names()], ["a"]);
});

Deno.test("HeldVersions holds a whole list by reference and layers changes over it", () => {
  const list = [resource("a"), resource("b"), resource("c")];
  const held = new HeldVersions(memos, { stale: "v0" });
  held.holdExactly(list);
  assert.ok(held.holdsExactly(list));
  assert.equal(held.has("stale"), false, "holding a whole list forgets what was held before");
  assert.equal(held.get("b"), list[1].version);
  held.set("b", "v9");
  assert.equal(held.holdsExactly(list), false, "a change since means it no longer holds the list as sent");
  assert.equal(held.get("b"), "v9");
  assert.equal(held.delete("c"), true);
  assert.equal(held.delete("c"), false, "deleting what is not held says so");
  held.set("d", "v1");
  assert.deepEqual([...held.names()], ["a", "b", "d"]);
  assert.equal(held.has("c"), false);
  assert.equal(held.delete("d"), true);
  assert.deepEqual([...held.names()], ["a", "b"]);
});

Deno.test("HeldVersions tells which resources of a generation are new to the proxy, and which held names are gone", () => {
  const [a, b, c] = [resource("a"), resource("b"), resource("c")];
  const held = new HeldVersions(memos);
  const first = [a, b];
  assert.equal(held.changedIn(first), first, "everything is new: the very list");
  held.holdExactly(first);
  assert.deepEqual(held.changedIn(first), [], "the list it holds");
  const next = [a, resource("b", 2), c];
  assert.deepEqual(held.changedIn(next).map((r) => r.name), ["b", "c"]);
  assert.deepEqual(held.changedIn([resource("a"), b]), [], "equal bytes in another object are not a change");
  assert.deepEqual(held.namesNotIn(new Set(["a"])), ["b"]);
  held.set("d", "v1");
  held.delete("a");
  assert.deepEqual(held.namesNotIn(new Set(["b"])), ["d"]);
  assert.deepEqual(
    held.changedIn([resource("d")]).length,
    1,
    "a version other than the one held is a change",
  );
});

Deno.test("HeldVersions holders of one list work out its missing names once", () => {
  const list = [resource("a"), resource("b")];
  const [one, other] = [new HeldVersions(memos), new HeldVersions(memos)];
  one.holdExactly(list);
  other.holdExactly(list);
  const present = new Set(["a"]);
  assert.deepEqual(one.namesNotIn(present), ["b"]);
  assert.equal(one.namesNotIn(present), other.namesNotIn(present), "the same answer object for both");
  other.set("c", "v1");
  assert.deepEqual(other.namesNotIn(present), ["b", "c"], "changes over the list are still counted");
});
