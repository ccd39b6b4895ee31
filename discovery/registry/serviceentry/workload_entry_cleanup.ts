/**
 * The clean-up of auto-registered WorkloadEntries, run by the leader of its duty: an entry disconnected for
 * longer than the grace period is deleted; so is one still marked connected to a replica whose liveness ran
 * out a grace period ago, or (without a liveness to read) whose mark is older than the longest a connection
 * may live. Every deletion reads the entry afresh and names the version it read.
 *
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import type { Resource } from "@mesh/shared/config/resource";
import type { WorkloadEntrySpec } from "@mesh/shared/config/networking/workload_entry";
import type { Timers } from "@mesh/shared/time/timers";
import type { ConfigStore } from "../../model/config_store.ts";
import type { ReplicaExpiry, ReplicaLivenessView } from "../../model/replica_liveness_view.ts";
import type { StoredWorkloadEntry, WorkloadEntryWriter } from "../../model/workload_entry_writer.ts";
import {
  AUTO_REGISTRATION_GROUP_ANNOTATION,
  registrationMarks,
  WORKLOAD_CONTROLLER_ANNOTATION,
} from "./auto_registered_entry.ts";

/** Options of {@link WorkloadEntryCleanup}. */
export interface WorkloadEntryCleanupOptions {
  /** Where the entries to clean up are read (kept current by the config sources). */
  readonly store: ConfigStore;
  /** Where entries are deleted. */
  readonly writer: WorkloadEntryWriter;
  /** `DISCOVERY_WORKLOAD_ENTRY_GRACE_PERIOD`, milliseconds. */
  readonly gracePeriodMs: number;
  /** How long an entry may stay marked connected to a replica before it is taken for one that died. */
  readonly staleConnectionMs: number;
  /** This replica's identity: its own entries are never judged by another's liveness. */
  readonly instanceId: string;
  /** Replicas' liveness (with an orchestrator): entries of a replica that died go a grace period after. */
  readonly liveness?: ReplicaLivenessView;
  /** Where clean-ups are logged. */
  readonly log: Logger;
  /** The wall clock of the annotations. */
  readonly now: () => Date;
  /** The sweeps' timers. */
  readonly timers: Timers;
}

/** Deletes the auto-registered WorkloadEntries that are due; see the module's summary. */
export class WorkloadEntryCleanup {
  readonly #o: WorkloadEntryCleanupOptions;
  readonly #now: () => Date;
  readonly #timers: Timers;

  constructor(options: WorkloadEntryCleanupOptions) {
    this.#o = options;
    this.#now = options.now;
    this.#timers = options.timers;
  }

  /**
   * When the entry is due for deletion (wall-clock ms), or undefined when it is not auto-registered; `expiries`
   * holds what is known of the liveness of the replicas entries are marked connected to.
   */
  #dueAt(
    entry: Resource<WorkloadEntrySpec>,
    expiries: ReadonlyMap<string, ReplicaExpiry>,
  ): number | undefined {
    if (!entry.meta.annotations?.[AUTO_REGISTRATION_GROUP_ANNOTATION]) return undefined;
    const { connectedAt, disconnectedAt } = registrationMarks(entry);
    if (connectedAt !== undefined) {
      const holder = expiries.get(entry.meta.annotations[WORKLOAD_CONTROLLER_ANNOTATION] ?? "");
      const stale = connectedAt + this.#o.staleConnectionMs;
      return holder?.expired ? Math.min(stale, holder.at + this.#o.gracePeriodMs) : stale;
    }
    if (disconnectedAt !== undefined) return disconnectedAt + this.#o.gracePeriodMs;
    return undefined;
  }

  /**
   * The liveness of every other replica an entry of `entries` is marked connected to; one that cannot be read
   * is left out (its entries are kept).
   */
  async #expiries(entries: readonly Resource<WorkloadEntrySpec>[]): Promise<Map<string, ReplicaExpiry>> {
    const expiries = new Map<string, ReplicaExpiry>();
    const liveness = this.#o.liveness;
    if (liveness === undefined) return expiries;
    const holders = new Set<string>();
    for (const entry of entries) {
      const holder = entry.meta.annotations?.[WORKLOAD_CONTROLLER_ANNOTATION];
      if (holder && holder !== this.#o.instanceId && registrationMarks(entry).connectedAt !== undefined) {
        holders.add(holder);
      }
    }
    liveness.retain(holders);
    for (const holder of holders) {
      try {
        expiries.set(holder, await liveness.expiry(holder));
      } catch (error) {
        this.#o.log.debug("replica liveness not read; its entries are kept", {
          replica: holder,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
    return expiries;
  }

  /**
   * While leading: deletes the entries that are due, then sleeps until the next is, or the next replica's
   * liveness can run out (at most a grace period, so entries marked meanwhile are seen in time).
   */
  sweepWhile(signal: AbortSignal): void {
    let timer: unknown;
    signal.addEventListener("abort", () => this.#timers.clearTimeout(timer), { once: true });
    const sweep = async () => {
      if (signal.aborted) return;
      const entries = this.#o.store.list("WorkloadEntry") as Resource<WorkloadEntrySpec>[];
      const expiries = await this.#expiries(entries);
      if (signal.aborted) return;
      const now = this.#now().getTime();
      let next = now + this.#o.gracePeriodMs;
      for (const expiry of expiries.values()) if (!expiry.expired) next = Math.min(next, expiry.at);
      for (const entry of entries) {
        const due = this.#dueAt(entry, expiries);
        if (due === undefined) continue;
        if (due > now) {
          next = Math.min(next, due);
          continue;
        }
        if (signal.aborted) return;
        await this.#cleanup(entry.meta.namespace, entry.meta.name, expiries, signal);
      }
      if (signal.aborted) return;
      timer = this.#timers.setTimeout(() => void sweep(), Math.max(0, next - this.#now().getTime()));
    };
    void sweep();
  }

  /** Deletes the entry if, read afresh, it is still due; a conflict leaves it to the next sweep. */
  async #cleanup(
    namespace: string,
    name: string,
    expiries: ReadonlyMap<string, ReplicaExpiry>,
    signal: AbortSignal,
  ): Promise<void> {
    let current: StoredWorkloadEntry | undefined;
    try {
      current = await this.#o.writer.get(namespace, name);
      const due = current === undefined ? undefined : this.#dueAt(current.entry, expiries);
      if (current === undefined || due === undefined || due > this.#now().getTime() || signal.aborted) return;
      await this.#o.writer.delete(namespace, name, current.resourceVersion);
      this.#o.log.info("cleaned up auto-registered WorkloadEntry", {
        entry: `${namespace}/${name}`,
        ...(registrationMarks(current.entry).connectedAt !== undefined
          ? { replica: current.entry.meta.annotations?.[WORKLOAD_CONTROLLER_ANNOTATION] ?? "" }
          : {}),
      });
    } catch (error) {
      this.#o.log.warn("failed cleaning up auto-registered WorkloadEntry", {
        entry: `${namespace}/${name}`,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
