import assert from "node:assert/strict";
import { DUTIES, soleLeader } from "./duty_gate.ts";

Deno.test("soleLeader leads its duty at once and aborts the run when released", () => {
  const gate = soleLeader(DUTIES.statusController);
  assert.ok(gate.leading());
  const signals: AbortSignal[] = [];
  const release = gate.whileLeading((signal) => signals.push(signal));
  assert.equal(signals.length, 1);
  assert.equal(signals[0].aborted, false);
  release();
  assert.equal(signals[0].aborted, true);
});
