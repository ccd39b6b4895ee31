import assert from "node:assert/strict";
import { type ConnectionSlot, ConnectionSlots } from "./connection_slots.ts";

Deno.test("ConnectionSlots makes room by closing the connection evictable the longest, in the narrowest scope", () => {
  const closed: string[] = [];
  const evicted: string[] = [];
  const slots = new ConnectionSlots(
    { maxConnections: 3, maxConnectionsPerPeer: 2 },
    (peer) => evicted.push(peer),
  );
  const claim = (peer: string, name: string) => slots.claim(peer, () => closed.push(name)) as ConnectionSlot;
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
