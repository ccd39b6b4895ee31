/**
 * What the auto-registration tests share: a WorkloadGroup and a proxy of it, a duty gate the test opens and
 * closes, one store both replicas read on a fake clock, and replicas' liveness as a test sets it.
 *
 * @module
 */
import FakeTimers from "@sinonjs/fake-timers";
import { type Logger, silentLogger } from "@mesh/shared/log/logger";
import { type DutyGate, soleLeader } from "@mesh/shared/lifecycle/duty_gate";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import type { WorkloadGroupSpec } from "@mesh/shared/config/networking/workload_group";
import { storeWorkloadEntryWriter } from "../../model/workload_entry_writer.ts";
import type { ReplicaExpiry, ReplicaLivenessView } from "../../model/replica_liveness_view.ts";
import { parseProxy } from "../../model/proxy.ts";
import { networking, orderedStore } from "../_test_support.ts";
import { WorkloadAutoRegistration } from "./workload_auto_registration.ts";

/** The WorkloadGroup `vm/reviews`. */
export const group = networking<WorkloadGroupSpec>("WorkloadGroup", "vm", "reviews", {
  metadata: { labels: { app: "reviews", tier: "group" }, annotations: { team: "books" } },
  template: {
    address: "",
    labels: { tier: "template", version: "v1" },
    ports: { http: 8080 },
    serviceAccount: "reviews",
  },
});

/** A proxy of `reviews` at 10.1.0.7 on network vpc-1, whose caller proved the group's identity. */
export const vm = Object.freeze({
  ...parseProxy({
    id: "sidecar~10.1.0.7~vm-7.vm~vm.svc.cluster.local",
    metadata: { AUTO_REGISTER_GROUP: "reviews", NETWORK: "vpc-1", LABELS: { tier: "proxy" } },
    locality: { region: "r1", zone: "z2" },
  }),
  verifiedIdentities: Object.freeze(["spiffe://cluster.local/ns/vm/sa/reviews"]),
});

/** A gate the test opens and closes, as an election would. */
export function manualGate(): DutyGate & { win(): void; lose(): void } {
  let leading = false;
  let controller: AbortController | undefined;
  const runs = new Set<(signal: AbortSignal) => void>();
  return {
    duty: "mesh-leader",
    leading: () => leading,
    whileLeading(run) {
      runs.add(run);
      if (leading) run(controller!.signal);
      return () => runs.delete(run);
    },
    win() {
      leading = true;
      controller = new AbortController();
      for (const run of runs) run(controller.signal);
    },
    lose() {
      leading = false;
      controller?.abort();
    },
  };
}

/** One store (the orchestrator both replicas read), a fake clock, and a registration per replica. */
export function world(
  options: {
    gate?: DutyGate;
    maxConnectionAgeMs?: number;
    liveness?: (clock: FakeTimers.Clock) => ReplicaLivenessView;
    validateIdentity?: boolean;
    log?: Logger;
  } = {},
) {
  const clock = FakeTimers.createClock(Date.parse("2026-01-01T00:00:00Z"));
  const store = orderedStore();
  store.apply(group);
  const replica = (instanceId: string, gate: DutyGate = options.gate ?? soleLeader("mesh-leader")) =>
    new WorkloadAutoRegistration({
      enabled: true,
      gracePeriodMs: 10_000,
      maxConnectionAgeMs: options.maxConnectionAgeMs ?? Infinity,
      instanceId,
      store,
      writer: storeWorkloadEntryWriter(store),
      cleanup: gate,
      log: options.log ?? silentLogger,
      now: () => new Date(clock.now),
      timers: timersOf(clock),
      ...(options.liveness ? { liveness: options.liveness(clock) } : {}),
      ...(options.validateIdentity !== undefined ? { validateIdentity: options.validateIdentity } : {}),
    });
  const stored = () => store.get("WorkloadEntry", "vm", "reviews-10.1.0.7-vpc-1");
  const connectedAt = () => new Date(clock.now);
  return { clock, store, replica, stored, connectedAt };
}

/** Replicas' liveness as the test sets it: a replica named in `diedAt` ran out then, the others live on. */
export function livenessOf(clock: FakeTimers.Clock, diedAt: Map<string, number>): ReplicaLivenessView {
  return {
    expiry(replica): Promise<ReplicaExpiry> {
      const died = diedAt.get(replica);
      return Promise.resolve(
        died !== undefined && died <= clock.now
          ? { expired: true, at: died }
          : { expired: false, at: died ?? clock.now + 30_000 },
      );
    },
    retain() {},
  };
}
