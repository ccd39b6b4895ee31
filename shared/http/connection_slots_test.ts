import assert from "node:assert/strict";
import { type ConnectionSlot, ConnectionSlots } from "./connection_slots.ts";

Deno.test("ConnectionSlots makes room by closing the connection evictable the longest, in the narrowest scope", () => {
  const closed: string[] = [];
  const evicted: string[] = [];
  const slots = new ConnectionSlots(
    { maxConnections: 3, maxConnectionsPerPeer: 2 },
    (peer) => evicted.push(peer),
  );
  const claim = (peer: string, name: string) => {
    const slot = slots.claim(peer, () => void closed.push(name)) as ConnectionSlot;
    slots.newRound();
    return slot;
  };
  const a1 = claim("a", "a1");
  claim("a", "a2");
  a1.evictable(false);
  claim("a", "a3"); // a's bound: a2, its only evictable connection, makes room
  assert.deepEqual([closed, evicted], [["a2"], ["a"]]);
  claim("b", "b1"); // listener at 3 now: a1 (busy), a3, b1
  a1.evictable(true); // idle again, so the most recently evictable
  claim("c", "c1"); // the listener's bound: a3 has been evictable the longest
  assert.deepEqual(closed, ["a2", "a3"]);
  assert.equal(slots.size, 3);
});

Deno.test("ConnectionSlots refuses a newcomer when every connection in scope has a request in progress", () => {
  const slots = new ConnectionSlots({ maxConnections: 2, maxConnectionsPerPeer: 1 });
  const a = slots.claim("a", () => {}) as ConnectionSlot;
  a.evictable(false);
  assert.equal(slots.claim("a", () => {}), "peer_connections");
  const b = slots.claim("b", () => {}) as ConnectionSlot;
  b.evictable(false);
  assert.equal(slots.claim("c", () => {}), "connections");
  b.close();
  b.close();
  assert.equal(slots.size, 1);
  assert.notEqual(typeof slots.claim("c", () => {}), "string");
});

Deno.test("ConnectionSlots closes a connection already answered before one waiting for its first answer", () => {
  const closed: string[] = [];
  const slots = new ConnectionSlots({ maxConnections: 10, maxConnectionsPerPeer: 2 });
  const fresh = slots.claim("a", () => void closed.push("fresh")) as ConnectionSlot;
  const answered = slots.claim("a", () => void closed.push("answered")) as ConnectionSlot;
  answered.served();
  slots.newRound();
  slots.claim("a", () => void closed.push("newcomer"));
  assert.deepEqual(closed, ["answered"], "the older, unanswered connection stays");
  assert.ok(fresh);
});

Deno.test("ConnectionSlots closes no connection claimed in the current round: the newcomer waits a round", () => {
  const closed: string[] = [];
  const slots = new ConnectionSlots({ maxConnections: 2, maxConnectionsPerPeer: 1 });
  slots.claim("a", () => void closed.push("probe"));
  assert.equal(slots.claim("a", () => void closed.push("flood")), "wait");
  slots.claim("b", () => void closed.push("other"));
  assert.equal(
    slots.claim("c", () => void closed.push("flood")),
    "wait",
    "the listener's bound waits as well",
  );
  assert.equal(closed.length, 0, "nothing closed");
  slots.newRound();
  assert.notEqual(typeof slots.claim("a", () => void closed.push("flood")), "string");
  assert.deepEqual(closed, ["probe"], "once it has had its turn, an idle connection makes room");
});
