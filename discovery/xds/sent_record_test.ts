import assert from "node:assert/strict";
import { ListMemos } from "./list_memos.ts";
import { SentRecord } from "./sent_record.ts";
import { VersionedResource } from "./versioned_resource.ts";

/** One server's memos, shared by the records of a test as by the connections of a server. */
const memos = new ListMemos();

const resource = (name: string, byte = 1) => new VersionedResource(name, new Uint8Array([byte]));
const names = (record: SentRecord) => [...record.toMap().keys()];

Deno.test("SentRecord holds a sent list as it is and layers later changes over it", () => {
  const record = new SentRecord(memos);
  const list = [resource("a"), resource("b"), resource("c")];
  record.replace(list);
  assert.deepEqual(names(record), ["a", "b", "c"]);
  assert.equal(record.toMap().get("b"), list[1], "the very objects sent, not copies");
  const newer = resource("b", 2);
  record.set(newer);
  record.delete("c");
  record.set(resource("d"));
  assert.deepEqual(names(record), ["a", "b", "d"]);
  assert.equal(record.toMap().get("b"), newer);
  assert.deepEqual(list.map((r) => r.name), ["a", "b", "c"], "the shared list is never modified");
});

Deno.test("SentRecord keeps only the retained names, and a new full set replaces everything", () => {
  const record = new SentRecord(memos);
  record.replace([resource("a"), resource("b")]);
  record.set(resource("c"));
  record.retain(["b", "c", "z"]);
  assert.deepEqual(names(record), ["b", "c"]);
  record.replace([resource("x")]);
  assert.deepEqual(names(record), ["x"]);
});

Deno.test("SentRecord narrowed to a name list again keeps changes made since, and narrows to a new list", () => {
  const record = new SentRecord(memos);
  const watched = ["a", "b"];
  record.replace([resource("a"), resource("b")], watched);
  const newer = resource("a", 2);
  record.set(newer);
  record.retain(watched);
  assert.equal(record.toMap().get("a"), newer, "an endpoint update on top of the list survives");
  record.retain(["a"]);
  assert.deepEqual(names(record), ["a"], "a shorter watch drops what it no longer names");
});

Deno.test("SentRecord tells whether a generation is exactly what the proxy holds", () => {
  const record = new SentRecord(memos);
  const [a, b] = [resource("a"), resource("b")];
  assert.equal(record.holdsExactly([a]), false, "nothing sent yet");
  record.replace([a, b]);
  assert.ok(record.holdsExactly([a, b]));
  assert.equal(record.holdsExactly([b, a]), false, "a list as sent is compared in its order");
  assert.ok(record.holdsExactly([resource("a"), resource("b")]), "rebuilt with the same bytes");
  assert.equal(record.holdsExactly([a, resource("b", 2)]), false, "other bytes");
  assert.equal(record.holdsExactly([a]), false, "one fewer");
  assert.equal(record.holdsExactly([a, b, resource("c")]), false, "one more");
  const newer = resource("a", 2);
  record.set(newer);
  assert.ok(record.holdsExactly([resource("a", 2), b]), "an update layered over the list counts");
  assert.ok(record.holdsExactly([b, resource("a", 2)]), "with updates layered, in any order");
  assert.equal(record.holdsExactly([a, b]), false);
  record.delete("b");
  record.set(resource("c"));
  assert.ok(record.holdsExactly([newer, resource("c")]));
  assert.equal(record.holdsExactly([newer, b, resource("c")]), false, "a dropped name is not held");
});
