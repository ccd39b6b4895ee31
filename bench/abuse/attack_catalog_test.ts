import assert from "node:assert/strict";
import { ATTACKS, selectAttacks } from "./attack_catalog.ts";

Deno.test("every attack runs by default, and a family name selects each of its variants", () => {
  assert.equal(selectAttacks([]).length, ATTACKS.length);
  assert.deepEqual(selectAttacks(["webhook-bodies"]).map((a) => a.name), [
    "webhook-bodies",
    "webhook-bodies:h1",
  ]);
  assert.deepEqual(selectAttacks(["slot-flood:tls"]).map((a) => a.name), ["slot-flood:tls"]);
});

Deno.test("an unknown attack name is refused with the names there are", () => {
  assert.throws(
    () => selectAttacks(["bogus"]),
    /Unknown --attack "bogus": expected all or one of delta-names/,
  );
});

Deno.test("each attack's small sizes name the same sizes as its full ones", () => {
  for (const attack of ATTACKS) {
    assert.deepEqual(Object.keys(attack.small), Object.keys(attack.full), attack.name);
  }
});
