import assert from "node:assert/strict";
import { DUTIES } from "@mesh/shared/lifecycle/duty_gate";
import { silentLogger } from "@mesh/shared/log/logger";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { createDutyGates, electionIdentity } from "./duty_gates.ts";
import type { LeaseApi } from "./lease_record.ts";

Deno.test('A replica elects under POD_NAME, else its host name, else "unknown"', () => {
  assert.equal(electionIdentity("discovery-7f9c", () => "host-1"), "discovery-7f9c");
  assert.equal(electionIdentity("", () => "host-1"), "host-1");
  assert.equal(electionIdentity("", () => ""), "unknown");
  assert.equal(
    electionIdentity("", () => {
      throw new Deno.errors.PermissionDenied("no --allow-sys");
    }),
    "unknown",
  );
});

Deno.test("Without an orchestrator a replica leads every duty alone, and says so in discovery_leader", async () => {
  const metrics = new Metrics("discovery", { version: "1", tag: "1" });
  const duties = createDutyGates({
    podName: "solo",
    namespace: "mesh-system",
    ttlMs: 30_000,
    log: silentLogger,
    metrics,
  });
  assert.ok(Object.values(duties.gates).every((gate) => gate.leading()));
  assert.deepEqual(duties.status().map((s) => s.holder), Object.values(DUTIES).map(() => "solo"));
  assert.match(await metrics.render(), /^discovery_leader\{duty="mesh-leader"\} 1$/m);
});

Deno.test("With an orchestrator every duty has its own Lease, and none is led before it is won", async () => {
  const metrics = new Metrics("discovery", { version: "1", tag: "1" });
  const never = new Promise<never>(() => {});
  const leases: LeaseApi = { get: () => never, create: () => never, update: () => never };
  const duties = createDutyGates({
    leases,
    podName: "replica-a",
    namespace: "mesh-system",
    ttlMs: 30_000,
    log: silentLogger,
    metrics,
  });
  assert.deepEqual(Object.values(duties.gates).map((gate) => gate.duty), Object.values(DUTIES));
  assert.ok(Object.values(duties.gates).every((gate) => !gate.leading()));
  assert.match(await metrics.render(), /^discovery_leader\{duty="mesh-status-leader"\} 0$/m);
  assert.equal(duties.identity, "replica-a");
});
