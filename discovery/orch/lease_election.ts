/**
 * Leader election for one singleton duty on a `coordination.k8s.io/v1` Lease, as client-go's leader election
 * runs it for the reference (lease duration, renew deadline, retry period; the Lease released on stop, as
 * `ReleaseOnCancel` does).
 *
 * Invariants:
 * - A Lease another replica holds is taken only once `leaseDurationSeconds` have passed on this elector's
 *   monotonic clock since it last saw the record change (client-go's `observedTime`): the holder's renewals
 *   keep changing it, and clocks of two machines are never compared.
 * - Every write names the version it read; a 409 means someone else wrote, so the Lease is read again.
 * - The duty stops the moment the lease is lost: when another holder is seen, and when no renewal succeeded
 *   for the renew deadline (a timer, so a hung API server cannot hold it open). The replica keeps serving
 *   everything else; only the duty stops.
 *
 * @module
 */
import type { DutyGate } from "@mesh/shared/lifecycle/duty_gate";
import type { Logger } from "@mesh/shared/log/logger";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import { type LeaseApi, LeaseConflictError, type LeaseRecord, type StoredLease } from "./lease_record.ts";

/** The three durations of an election, in milliseconds. */
export interface LeaseDurations {
  /** How long a Lease stays held after its last renewal. */
  readonly leaseMs: number;
  /** How long a leader keeps trying to renew before it gives the duty up. */
  readonly renewDeadlineMs: number;
  /** How often a candidate tries to take the Lease and a leader renews it. */
  readonly retryMs: number;
}

/** The reference's durations for a time to live: lease = ttl, renew deadline = ttl/2, retry = ttl/4. */
export function leaseDurationsFor(ttlMs: number): LeaseDurations {
  return { leaseMs: ttlMs, renewDeadlineMs: ttlMs / 2, retryMs: ttlMs / 4 };
}

/** The reference's time to live of every election: 30 s. */
export const REFERENCE_LEASE_TTL_MS = 30_000;

/** What one elector needs. */
export interface LeaseElectorOptions {
  /** The duty, and the Lease's name (one of `DUTIES`). */
  readonly duty: string;
  /** Where the Lease lives: the server's namespace. */
  readonly namespace: string;
  /** Who this replica is (`POD_NAME`). */
  readonly identity: string;
  readonly api: LeaseApi;
  readonly durations: LeaseDurations;
  readonly log: Logger;
  /** Timers and the monotonic clock; the runtime's when absent. */
  readonly timers?: Timers;
  /** The wall clock written into the Lease's times. */
  readonly wallClock?: () => Date;
  /** Told each time this replica starts or stops leading (for the leader gauge). */
  readonly onLeadingChange?: (leading: boolean) => void;
}

/** What the debug interface shows of one election. */
export interface LeaseElectionStatus {
  readonly duty: string;
  /** True while this replica leads. */
  readonly leading: boolean;
  /** The holder this replica last saw in the Lease; empty when none. */
  readonly holder: string;
  /** How many times the Lease changed hands, as last seen. */
  readonly transitions: number;
}

/** The outcome of one attempt to take or renew the Lease. */
type Attempt = "held" | "other";

/** Elects a leader for one duty, and runs the duty's work while this replica leads. */
export class LeaseElector implements DutyGate {
  readonly duty: string;
  readonly #o: LeaseElectorOptions;
  readonly #timers: Timers;
  readonly #wall: () => Date;
  readonly #runs = new Map<(signal: AbortSignal) => void, AbortController | undefined>();
  #leading = false;
  #observed?: { readonly lease: StoredLease; readonly at: number };
  #retry?: unknown;
  #deadline?: unknown;
  #attempting?: Promise<void>;
  #started = false;
  #stopped = false;

  constructor(options: LeaseElectorOptions) {
    this.duty = options.duty;
    this.#o = options;
    this.#timers = options.timers ?? systemTimers;
    this.#wall = options.wallClock ?? (() => new Date());
  }

  leading(): boolean {
    return this.#leading;
  }

  whileLeading(run: (signal: AbortSignal) => void): () => void {
    this.#runs.set(run, undefined);
    if (this.#leading) this.#call(run);
    return () => {
      this.#runs.get(run)?.abort();
      this.#runs.delete(run);
    };
  }

  /** What this replica knows of the election now. */
  status(): LeaseElectionStatus {
    const record = this.#observed?.lease.record;
    return {
      duty: this.duty,
      leading: this.#leading,
      holder: record?.holderIdentity ?? "",
      transitions: record?.leaseTransitions ?? 0,
    };
  }

  /** Resolves once the attempt in flight, if any, has finished and its outcome is applied. */
  async idle(): Promise<void> {
    await this.#attempting;
  }

  /** Starts trying to take the Lease; returns at once. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#attempt();
  }

  /** Stops the duty and the election, and releases the Lease if this replica holds it. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#timers.clearTimeout(this.#retry);
    await this.#attempting;
    this.#lose("the server is stopping");
    await this.#release();
  }

  /** One attempt, then the next one a retry period after it ends. */
  #attempt(): void {
    if (this.#stopped) return;
    const startedAt = this.#timers.now();
    this.#attempting = this.#bounded(this.#tryAcquireOrRenew())
      .then((outcome) => this.#settle(outcome, startedAt))
      .catch((error) => {
        if (this.#stopped) return;
        const message = error instanceof Error ? error.message : String(error);
        // A leader keeps its duty until the renew deadline; the log says why renewing failed.
        this.#o.log[this.#leading ? "warn" : "debug"]("leader election attempt failed", {
          lease: this.#name(),
          error: message,
        });
      })
      .finally(() => {
        this.#attempting = undefined;
        if (!this.#stopped) {
          this.#retry = this.#timers.setTimeout(() => this.#attempt(), this.#o.durations.retryMs);
        }
      });
  }

  #settle(outcome: Attempt, startedAt: number): void {
    if (this.#stopped) return;
    if (outcome === "other") {
      this.#lose(`the Lease is held by "${this.status().holder}"`);
      return;
    }
    // The renew deadline counts from the start of the attempt that renewed: the Lease's own clock started then
    // at the earliest.
    this.#timers.clearTimeout(this.#deadline);
    const left = startedAt + this.#o.durations.renewDeadlineMs - this.#timers.now();
    if (left <= 0) {
      this.#lose("renewing took longer than the renew deadline");
      return;
    }
    this.#deadline = this.#timers.setTimeout(
      () => this.#lose("no renewal succeeded within the renew deadline"),
      left,
    );
    if (!this.#leading) this.#win();
  }

  /** Fails an attempt that has not answered within the renew deadline, as client-go's request timeout does. */
  #bounded<T>(work: Promise<T>): Promise<T> {
    let timer: unknown;
    const timeout = new Promise<never>((_, reject) => {
      timer = this.#timers.setTimeout(
        () =>
          reject(new Error(`No answer from the API server within ${this.#o.durations.renewDeadlineMs} ms`)),
        this.#o.durations.renewDeadlineMs,
      );
    });
    return Promise.race([work, timeout]).finally(() => this.#timers.clearTimeout(timer));
  }

  async #tryAcquireOrRenew(conflicts = 0): Promise<Attempt> {
    const { namespace, identity, api } = this.#o;
    const name = this.#o.duty;
    const now = this.#timers.now();
    const stamp = this.#wall().toISOString();
    const seconds = Math.max(1, Math.ceil(this.#o.durations.leaseMs / 1000));
    try {
      const current = await api.get(namespace, name);
      if (current === undefined) {
        this.#observe(
          await api.create(namespace, name, {
            holderIdentity: identity,
            leaseDurationSeconds: seconds,
            acquireTime: stamp,
            renewTime: stamp,
            leaseTransitions: 0,
          }),
          now,
        );
        return "held";
      }
      // A record is seen when the read answers, not when it was sent: a renewal written while the read was in
      // flight (a slow API server, a busy loop) would otherwise count as older than it is, and the Lease be
      // taken up to the read's latency before it runs out.
      const seenAt = this.#timers.now();
      if (this.#observed === undefined || !sameRecord(this.#observed.lease.record, current.record)) {
        this.#observe(current, seenAt);
      }
      const record = current.record;
      const mine = record.holderIdentity === identity;
      const heldFor = record.leaseDurationSeconds > 0
        ? record.leaseDurationSeconds * 1000
        : this.#o.durations.leaseMs;
      if (!mine && record.holderIdentity !== "" && this.#observed!.at + heldFor > seenAt) return "other";
      const next: LeaseRecord = {
        holderIdentity: identity,
        leaseDurationSeconds: seconds,
        acquireTime: mine ? record.acquireTime : stamp,
        renewTime: stamp,
        leaseTransitions: mine ? record.leaseTransitions : record.leaseTransitions + 1,
      };
      this.#observe(await api.update(namespace, name, next, current.resourceVersion), now);
      return "held";
    } catch (error) {
      // Someone wrote between the read and the write: read again once, and see who holds it now.
      if (error instanceof LeaseConflictError && conflicts === 0) return await this.#tryAcquireOrRenew(1);
      throw error;
    }
  }

  #observe(lease: StoredLease, at: number): void {
    this.#observed = { lease, at };
  }

  #win(): void {
    this.#leading = true;
    this.#o.log.info("leader election won", { lease: this.#name(), identity: this.#o.identity });
    this.#o.onLeadingChange?.(true);
    for (const run of [...this.#runs.keys()]) this.#call(run);
  }

  #lose(reason: string): void {
    this.#timers.clearTimeout(this.#deadline);
    if (!this.#leading) return;
    this.#leading = false;
    for (const [run, controller] of this.#runs) {
      controller?.abort(new Error(`Lost the lease ${this.#name()}: ${reason}`));
      this.#runs.set(run, undefined);
    }
    this.#o.log.info("leader election lock lost", { lease: this.#name(), reason });
    this.#o.onLeadingChange?.(false);
  }

  #call(run: (signal: AbortSignal) => void): void {
    const controller = new AbortController();
    this.#runs.set(run, controller);
    try {
      run(controller.signal);
    } catch (error) {
      this.#o.log.error("duty failed to start", {
        lease: this.#name(),
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /** Hands the Lease back (no holder, one second left), so the next replica need not wait for it to expire. */
  async #release(): Promise<void> {
    const observed = this.#observed?.lease;
    if (observed === undefined || observed.record.holderIdentity !== this.#o.identity) return;
    const stamp = this.#wall().toISOString();
    try {
      await this.#bounded(this.#o.api.update(this.#o.namespace, this.#o.duty, {
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: stamp,
        renewTime: stamp,
        leaseTransitions: observed.record.leaseTransitions,
      }, observed.resourceVersion));
      this.#o.log.info("leader election lock released", { lease: this.#name() });
    } catch (error) {
      this.#o.log.warn("could not release the lease; it expires on its own", {
        lease: this.#name(),
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  #name(): string {
    return `${this.#o.namespace}/${this.#o.duty}`;
  }
}

function sameRecord(a: LeaseRecord, b: LeaseRecord): boolean {
  return a.holderIdentity === b.holderIdentity && a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime && a.renewTime === b.renewTime &&
    a.leaseTransitions === b.leaseTransitions;
}
