import assert from "node:assert/strict";
import { HeldVersions } from "./held_versions.ts";
import { VersionedResource } from "./versioned_resource.ts";

const resource = (name: string, byte = 1) => new VersionedResource(name, new Uint8Array([byte]));

Deno.test("HeldVersions starts from the versions the proxy reported", () => {
  const held = new HeldVersions({ a: "v1" });
  assert.equal(held.get("a"), "v1");
  assert.equal(held.has("b"), false);
  assert.deepEqual([...held.names()], ["a"]);
});

Deno.test("HeldVersions holds a whole list by reference and layers changes over it", () => {
  const list = [resource("a"), resource("b"), resource("c")];
  const held = new HeldVersions({ stale: "v0" });
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
