/**
 * Each replica's liveness on the orchestrator: a `coordination.k8s.io/v1` Lease `mesh-replica-<identity>` that
 * the replica holds and renews as the election renews a duty's (same durations, released on a clean stop),
 * and what the leaders of other duties read of it: whether a replica has stopped renewing, and since when.
 *
 * Invariants:
 * - A replica's Lease counts as expired only once it has not changed for its `leaseDurationSeconds` on the
 *   reader's monotonic clock since the reader first saw it so (as the election judges a holder): two machines'
 *   clocks are never compared, and a reader that just started waits a full duration before it judges anyone.
 * - A released Lease (no holder: the replica stopped cleanly) is expired from the moment it is seen; an absent
 *   one is judged like an unchanged one, with this replica's own duration.
 * - A failed read judges nobody: the caller keeps what the replica holds.
 *
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import { type LeaseDurations, LeaseElector } from "./lease_election.ts";
import type { LeaseApi, LeaseRecord } from "./lease_record.ts";
import type { ReplicaExpiry, ReplicaLivenessView } from "../model/replica_liveness_view.ts";

/** The name of the Lease a replica of `identity` keeps to say it lives. */
export function replicaLeaseName(identity: string): string {
  return `mesh-replica-${identity}`;
}

/** What a replica's liveness needs. */
export interface ReplicaLivenessOptions {
  /** This replica's identity (the election's). */
  readonly identity: string;
  /** The server's namespace, where the Leases live. */
  readonly namespace: string;
  readonly api: LeaseApi;
  /** The election's durations: the Lease's duration, and how often it is renewed. */
  readonly durations: LeaseDurations;
  readonly log: Logger;
  /** Timers and the monotonic clock; the runtime's when absent. */
  readonly timers?: Timers;
  /** The wall clock of the Lease's times and of the expiries handed out. */
  readonly wallClock?: () => Date;
}

interface Observation {
  /** What was read: the record as text, or "" when there was no Lease. */
  readonly seen: string;
  /** When the reader first saw it so, on its monotonic clock. */
  readonly at: number;
  /** How long the Lease holds unrenewed from then. */
  readonly holdsMs: number;
}

/** Keeps this replica's liveness Lease renewed, and hands out readers of other replicas'. */
export class ReplicaLiveness {
  readonly #o: ReplicaLivenessOptions;
  readonly #timers: Timers;
  readonly #wall: () => Date;
  readonly #heartbeat: LeaseElector;

  constructor(options: ReplicaLivenessOptions) {
    this.#o = options;
    this.#timers = options.timers ?? systemTimers;
    this.#wall = options.wallClock ?? (() => new Date());
    // No other replica names this Lease, so the elector holds it from its first attempt and renews it on.
    this.#heartbeat = new LeaseElector({
      duty: replicaLeaseName(options.identity),
      namespace: options.namespace,
      identity: options.identity,
      api: options.api,
      durations: options.durations,
      log: options.log,
      timers: this.#timers,
      wallClock: this.#wall,
    });
  }

  /** This replica's identity. */
  get identity(): string {
    return this.#o.identity;
  }

  /** Starts renewing this replica's Lease; returns at once. */
  start(): void {
    this.#heartbeat.start();
  }

  /** Stops renewing and releases the Lease, so readers count this replica gone at once. */
  async stop(): Promise<void> {
    await this.#heartbeat.stop();
  }

  /** Resolves once this replica's renewal in flight, if any, has finished. */
  async idle(): Promise<void> {
    await this.#heartbeat.idle();
  }

  /** A reader of other replicas' liveness, with observations of its own (one per writer that reads them). */
  reader(): ReplicaLivenessView {
    return new ReplicaLivenessReader(this.#o, this.#timers, this.#wall);
  }
}

/** Judges other replicas' liveness from their Leases; see the module's invariants. */
class ReplicaLivenessReader implements ReplicaLivenessView {
  /** Replica identity → this reader's last observation of its Lease. */
  readonly #observed = new Map<string, Observation>();

  readonly #o: ReplicaLivenessOptions;
  readonly #timers: Timers;
  readonly #wall: () => Date;

  constructor(options: ReplicaLivenessOptions, timers: Timers, wall: () => Date) {
    this.#o = options;
    this.#timers = timers;
    this.#wall = wall;
  }

  /**
   * Reads `replica`'s Lease and says whether it ran out; this replica is always live.
   *
   * @throws when the Lease cannot be read (nothing is judged then)
   */
  async expiry(replica: string): Promise<ReplicaExpiry> {
    if (replica === this.#o.identity) {
      return { expired: false, at: this.#wall().getTime() + this.#o.durations.leaseMs };
    }
    const lease = await this.#o.api.get(this.#o.namespace, replicaLeaseName(replica));
    const now = this.#timers.now();
    const seen = lease === undefined ? "" : JSON.stringify(lease.record);
    let observation = this.#observed.get(replica);
    if (observation === undefined || observation.seen !== seen) {
      observation = { seen, at: now, holdsMs: this.#holdsMs(lease?.record) };
      this.#observed.set(replica, observation);
    }
    const endsIn = observation.at + observation.holdsMs - now;
    return { expired: endsIn <= 0, at: this.#wall().getTime() + endsIn };
  }

  /** Forgets the observations of replicas other than `replicas` (those nothing refers to any more). */
  retain(replicas: ReadonlySet<string>): void {
    for (const replica of this.#observed.keys()) if (!replicas.has(replica)) this.#observed.delete(replica);
  }

  #holdsMs(record: LeaseRecord | undefined): number {
    if (record === undefined) return this.#o.durations.leaseMs;
    if (record.holderIdentity === "") return 0;
    return record.leaseDurationSeconds > 0 ? record.leaseDurationSeconds * 1000 : this.#o.durations.leaseMs;
  }
}
