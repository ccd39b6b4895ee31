import assert from "node:assert/strict";
import { summarize } from "../latency_stats.ts";
import { missedTargets, renderAbuseReport } from "./abuse_report.ts";
import type { AttackResult } from "./run_attack.ts";

const healthy: AttackResult = {
  name: "nack-flood",
  sizes: { nacks: 10 },
  idleMiB: 150,
  peakMiB: 170,
  afterMiB: 160,
  afterS: 60,
  ready: { latency: summarize([2, 3, 40]), failures: 0, maxGapMs: 150 },
  pushes: { expected: 5, received: 5, latencyP50Ms: 200, latencyMaxMs: 300 },
  alive: true,
  logLines: 10,
  logBytes: 1000,
  attackSeconds: 3,
  attackerEnded: "finished",
  notes: {},
};

Deno.test("an attack meets the targets of #35 when the server lives, returns to idle, pushes all and answers", () => {
  assert.deepEqual(missedTargets(healthy), []);
});

Deno.test("an attack misses a target for each way the server falls short", () => {
  assert.deepEqual(missedTargets({ ...healthy, afterMiB: 166 }), ["RSS not back"]);
  assert.deepEqual(
    missedTargets({ ...healthy, pushes: { ...healthy.pushes!, received: 4 } }),
    ["pushes missed"],
  );
  assert.deepEqual(
    missedTargets({ ...healthy, ready: { ...healthy.ready, failures: 1 } }),
    ["/ready slow or failed"],
  );
  assert.deepEqual(
    missedTargets({ ...healthy, ready: { ...healthy.ready, latency: summarize([2, 1001]) } }),
    ["/ready slow or failed"],
  );
  assert.deepEqual(missedTargets({ ...healthy, maxLogLines: 9 }), ["log not bounded"]);
  assert.deepEqual(missedTargets({ ...healthy, maxLogLines: 10 }), []);
  assert.deepEqual(
    missedTargets({ ...healthy, alive: false, afterMiB: undefined, death: "killed by harness at 3100 MB" }),
    ["server died", "RSS not back"],
  );
});

Deno.test("the report names a server the harness killed and the size it reached", () => {
  const report = renderAbuseReport([{
    ...healthy,
    alive: false,
    afterMiB: undefined,
    death: "killed by harness at 3100 MB",
  }]);
  assert.match(report, /\| nack-flood \| 150 \/ 170 \/ – \(60 s\) \|/);
  assert.match(report, /no \(killed by harness at 3100 MB\)/);
});
