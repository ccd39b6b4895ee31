/**
 * The gates of every singleton duty of one replica: Lease electors when an orchestrator is there to elect
 * through, else gates that lead from the start (a replica of files runs alone). With elections, the replica
 * also keeps its liveness Lease (`replica_liveness.ts`), so leaders can tell when another replica died.
 *
 * @module
 */
import { DUTIES, type DutyGate, soleLeader } from "@mesh/shared/lifecycle/duty_gate";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { Timers } from "@mesh/shared/time/timers";
import { leaseDurationsFor, type LeaseElectionStatus, LeaseElector } from "./lease_election.ts";
import type { LeaseApi } from "./lease_record.ts";
import { ReplicaLiveness } from "./replica_liveness.ts";

/** A duty's key in `DUTIES`. */
export type DutyKey = keyof typeof DUTIES;

/** One gate per duty, and the election's lifetime. */
export interface DutyGates {
  /** The identity this replica leads under (`POD_NAME`, else the host name). */
  readonly identity: string;
  /** The gate of each duty, by its key in `DUTIES`. */
  readonly gates: Readonly<Record<DutyKey, DutyGate>>;
  /** Starts electing; returns at once. */
  start(): void;
  /** Stops every duty and releases the Leases this replica holds. */
  stop(): Promise<void>;
  /** Which duties this replica leads and who holds each, for the debug interface. */
  status(): LeaseElectionStatus[];
  /** This replica's liveness and its view of the others'; absent when it runs alone. */
  readonly liveness?: ReplicaLiveness;
}

/** What the elected gates need. */
export interface ElectedDutyGatesOptions {
  /** The Lease calls (the orchestrator's). */
  readonly api: LeaseApi;
  /** The server's namespace (`--namespace`/`POD_NAMESPACE`), where the Leases live. */
  readonly namespace: string;
  /** This replica's identity (`electionIdentity`). */
  readonly identity: string;
  /** `DISCOVERY_LEADER_ELECTION_TTL`: lease duration; renew deadline half of it, retry period a quarter. */
  readonly ttlMs: number;
  readonly log: Logger;
  /** Where `discovery_leader` goes. */
  readonly metrics: Metrics;
  readonly timers?: Timers;
}

/** The identity a replica elects under: `POD_NAME`, else the host name, else "unknown" (as the reference). */
export function electionIdentity(podName: string, hostname: () => string = () => Deno.hostname()): string {
  if (podName !== "") return podName;
  try {
    return hostname() || "unknown";
  } catch {
    return "unknown";
  }
}

function keys(): DutyKey[] {
  return Object.keys(DUTIES) as DutyKey[];
}

/** A Lease elector per duty, each counted in `discovery_leader{duty}`. */
export function electedDutyGates(options: ElectedDutyGatesOptions): DutyGates {
  const gauge = options.metrics.gauge("discovery_leader");
  const electors = Object.fromEntries(
    keys().map((key) => {
      const duty = DUTIES[key];
      gauge.set({ duty }, 0);
      return [
        key,
        new LeaseElector({
          duty,
          namespace: options.namespace,
          identity: options.identity,
          api: options.api,
          durations: leaseDurationsFor(options.ttlMs),
          log: options.log,
          ...(options.timers ? { timers: options.timers } : {}),
          onLeadingChange: (leading) => gauge.set({ duty }, leading ? 1 : 0),
        }),
      ];
    }),
  ) as Record<DutyKey, LeaseElector>;
  const all = () => keys().map((key) => electors[key]);
  const liveness = new ReplicaLiveness({
    identity: options.identity,
    namespace: options.namespace,
    api: options.api,
    durations: leaseDurationsFor(options.ttlMs),
    log: options.log,
    ...(options.timers ? { timers: options.timers } : {}),
  });
  return {
    identity: options.identity,
    gates: electors,
    liveness,
    start: () => {
      liveness.start();
      all().forEach((e) => e.start());
    },
    stop: async () => {
      await Promise.all([...all().map((e) => e.stop()), liveness.stop()]);
    },
    status: () => all().map((e) => e.status()),
  };
}

/** Gates that lead every duty from the start: one replica, no orchestrator to elect through. */
export function soleDutyGates(identity: string): DutyGates {
  const gates = Object.fromEntries(keys().map((key) => [key, soleLeader(DUTIES[key])])) as Record<
    DutyKey,
    DutyGate
  >;
  return {
    identity,
    gates,
    start() {},
    stop: () => Promise.resolve(),
    status: () =>
      keys().map((key) => ({ duty: DUTIES[key], leading: true, holder: identity, transitions: 0 })),
  };
}

/**
 * The gates of one replica: elected on the orchestrator's Leases when `leases` is given, else leading alone.
 * Settings come in checked (`DISCOVERY_LEADER_ELECTION_TTL` has its range).
 */
export function createDutyGates(
  options: Omit<ElectedDutyGatesOptions, "api" | "identity"> & { leases?: LeaseApi; podName: string },
): DutyGates {
  const identity = electionIdentity(options.podName);
  if (options.leases !== undefined) return electedDutyGates({ ...options, api: options.leases, identity });
  for (const duty of Object.values(DUTIES)) options.metrics.gauge("discovery_leader").set({ duty }, 1);
  return soleDutyGates(identity);
}
