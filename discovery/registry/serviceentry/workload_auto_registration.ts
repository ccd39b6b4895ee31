/**
 * WorkloadEntry auto-registration, as the reference's workload entry controller: a proxy whose metadata names a
 * WorkloadGroup (`AUTO_REGISTER_GROUP`) gets a WorkloadEntry from the group's template when it connects to any
 * replica, marked with that replica and the connection's start; when its last connection to that replica ends,
 * the entry is marked disconnected. The leader of the clean-up duty deletes entries disconnected for longer than
 * the grace period (`workload_entry_cleanup.ts`). An entry still marked connected to a replica that died before
 * it could mark it counts as disconnected from the moment that replica's liveness (its
 * `mesh-replica-<identity>` Lease) ran out, and goes a grace period later unless its proxy reconnected
 * meanwhile; without a liveness to read, it goes once its mark is older than the longest a connection may live
 * (`--keepaliveMaxServerConnectionAge`, times 1.5 twice as the reference, plus the closing grace). A replica
 * restarted under the same identity (its liveness never ran out) marks the entries its previous run held, and
 * whose proxies have not come back, disconnected as of its start.
 *
 * A proxy registers only under an identity its caller proved, in its namespace and of the entry's service
 * account ({@link entryControlRefusal}); `validateIdentity: false` turns that off, for meshes whose proxies
 * reach only the plaintext port.
 *
 * Invariants: every write names the version it read (a conflict is read again, never overwritten); a connect
 * older than the one the entry records changes nothing (the proxy moved on to another replica); an entry
 * another replica holds is never marked disconnected by this one.
 *
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import type { Resource } from "@mesh/shared/config/resource";
import type { WorkloadEntrySpec } from "@mesh/shared/config/networking/workload_entry";
import type { WorkloadGroupSpec } from "@mesh/shared/config/networking/workload_group";
import type { DutyGate } from "@mesh/shared/lifecycle/duty_gate";
import { PeerLogLimiter } from "@mesh/shared/log/peer_log_limiter";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import type { ConfigStore } from "../../model/config_store.ts";
import type { ReplicaLivenessView } from "../../model/replica_liveness_view.ts";
import type { Proxy } from "../../model/proxy.ts";
import { WorkloadEntryConflictError, type WorkloadEntryWriter } from "../../model/workload_entry_writer.ts";
import {
  AUTO_REGISTRATION_GROUP_ANNOTATION,
  autoRegisteredEntryName,
  CONNECTED_AT_ANNOTATION,
  DISCONNECTED_AT_ANNOTATION,
  entryControlRefusal,
  registrationMarks,
  WORKLOAD_CONTROLLER_ANNOTATION,
  workloadEntryFromGroup,
} from "./auto_registered_entry.ts";
import { WorkloadEntryCleanup } from "./workload_entry_cleanup.ts";

/** Options of WorkloadAutoRegistration. */
export interface WorkloadAutoRegistrationOptions {
  /** `DISCOVERY_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION`. */
  readonly enabled: boolean;
  /** `DISCOVERY_WORKLOAD_ENTRY_GRACE_PERIOD`, milliseconds. */
  readonly gracePeriodMs: number;
  /** `--keepaliveMaxServerConnectionAge` in milliseconds; Infinity when connections live forever. */
  readonly maxConnectionAgeMs: number;
  /** How long a connection past its age may still finish its streams (0 when absent). */
  readonly connectionGraceMs?: number;
  /** Identifies this replica in the controller annotation (`POD_NAME`). */
  readonly instanceId: string;
  /** Where WorkloadGroups and the entries to clean up are read (kept current by the config sources). */
  readonly store: ConfigStore;
  /** Where entries are written. */
  readonly writer: WorkloadEntryWriter;
  /** The duty whose leader deletes entries (`DUTIES.ingressController`, as the reference's `istio-leader`). */
  readonly cleanup: DutyGate;
  /** Where registrations and clean-ups are logged. */
  readonly log: Logger;
  /** The wall clock of the annotations. */
  readonly now?: () => Date;
  /** The clean-up's timers. */
  readonly timers?: Timers;
  /** Replicas' liveness (with an orchestrator): entries of a replica that died go a grace period after. */
  readonly liveness?: ReplicaLivenessView;
  /** `DISCOVERY_WORKLOAD_ENTRY_VALIDATE_IDENTITY`: a proxy registers only under a proved identity (default true). */
  readonly validateIdentity?: boolean;
}

/** Writes a failed registration makes again, each after the last (the reference retries too). */
const RETRIES = 5;

/** Keeps a WorkloadEntry for each connected proxy that names a WorkloadGroup; see the module's summary. */
export class WorkloadAutoRegistration {
  readonly #o: WorkloadAutoRegistrationOptions;
  readonly #now: () => Date;
  readonly #timers: Timers;
  /** Deletes the entries that are due while this replica leads the clean-up duty. */
  readonly #sweeper: WorkloadEntryCleanup;
  /** Connections to this replica per workload (network + address): a disconnect with another left is none. */
  readonly #connections = new Map<string, number>();
  /** The last write queued per workload: a workload's writes run one after another, in event order. */
  readonly #queued = new Map<string, Promise<void>>();
  /** Connections registered per proxy: a refused connection's disconnect changes nothing. */
  readonly #admitted = new WeakMap<Proxy, number>();
  /** Refusals are logged once a minute per entry, so a client that reconnects in a loop is one line. */
  readonly #refusalLog: PeerLogLimiter;
  #stopCleanup?: () => void;
  /** When this replica started (wall ms): an entry it holds with an older mark is a previous run's. */
  #startedAt = -Infinity;
  #orphanTimer: unknown;

  constructor(options: WorkloadAutoRegistrationOptions) {
    this.#o = options;
    this.#now = options.now ?? (() => new Date());
    this.#timers = options.timers ?? systemTimers;
    this.#refusalLog = new PeerLogLimiter(undefined, () => this.#timers.now());
    this.#sweeper = new WorkloadEntryCleanup({
      store: options.store,
      writer: options.writer,
      gracePeriodMs: options.gracePeriodMs,
      staleConnectionMs: this.staleConnectionMs,
      instanceId: options.instanceId,
      ...(options.liveness ? { liveness: options.liveness } : {}),
      log: options.log,
      now: this.#now,
      timers: this.#timers,
    });
  }

  /**
   * How long an entry may stay marked connected to a replica before it is taken for one that died: the
   * reference's 1.5 × 1.5 × the connection age, plus the grace a closing connection has, so that a proxy still
   * connected to a live replica (which reconnects, and is marked again, at least that often) is never taken.
   */
  get staleConnectionMs(): number {
    return this.#o.maxConnectionAgeMs * 1.5 * 1.5 + (this.#o.connectionGraceMs ?? 0);
  }

  /** Registers the proxy's workload at `connectedAt`; resolves once written (or found not to apply). */
  async onConnect(proxy: Proxy, connectedAt: Date): Promise<void> {
    const name = autoRegisteredEntryName(proxy);
    if (!this.#o.enabled || name === undefined || this.#refused(proxy, name)) return;
    this.#admitted.set(proxy, (this.#admitted.get(proxy) ?? 0) + 1);
    const key = workloadKey(proxy);
    this.#connections.set(key, (this.#connections.get(key) ?? 0) + 1);
    await this.#inOrder(
      key,
      () => this.#retrying("register", proxy, () => this.#register(proxy, name, connectedAt)),
    );
  }

  /** Marks the proxy's entry disconnected when its last connection to this replica (from `connectedAt`) ends. */
  async onDisconnect(proxy: Proxy, connectedAt: Date): Promise<void> {
    const name = autoRegisteredEntryName(proxy);
    const admitted = this.#admitted.get(proxy);
    if (!this.#o.enabled || name === undefined || admitted === undefined) return;
    if (admitted > 1) this.#admitted.set(proxy, admitted - 1);
    else this.#admitted.delete(proxy);
    const key = workloadKey(proxy);
    const left = (this.#connections.get(key) ?? 1) - 1;
    if (left > 0) {
      this.#connections.set(key, left);
      return;
    }
    this.#connections.delete(key);
    const disconnectedAt = this.#now();
    await this.#inOrder(
      key,
      () =>
        this.#retrying("unregister", proxy, () => this.#unregister(proxy, name, connectedAt, disconnectedAt)),
    );
  }

  /**
   * True (and logged) when the proxy may not hold its entry: the service account it must prove is the existing
   * entry's, else its group template's, as the store has them.
   */
  #refused(proxy: Proxy, name: string): boolean {
    if (this.#o.validateIdentity === false) return false;
    const entry = this.#o.store.get("WorkloadEntry", proxy.namespace, name) as
      | Resource<WorkloadEntrySpec>
      | undefined;
    const group = this.#o.store.get("WorkloadGroup", proxy.namespace, proxy.metadata.autoRegisterGroup!) as
      | Resource<WorkloadGroupSpec>
      | undefined;
    const why = entryControlRefusal(
      proxy,
      entry?.spec.serviceAccount ?? group?.spec.template?.serviceAccount,
    );
    if (why === undefined) return false;
    this.#refusalLog.log(
      `${proxy.namespace}/${name}`,
      (passedOver) =>
        this.#o.log.warn("auto-registration refused", {
          proxy: proxy.id,
          entry: `${proxy.namespace}/${name}`,
          reason: why,
          ...(passedOver > 0 && { notLogged: passedOver }),
        }),
    );
    return true;
  }

  /** Starts the clean-up whenever this replica leads its duty. */
  start(): void {
    if (!this.#o.enabled || this.#stopCleanup) return;
    this.#startedAt = this.#now().getTime();
    this.#stopCleanup = this.#o.cleanup.whileLeading((signal) => this.#sweeper.sweepWhile(signal));
    this.#releasePreviousRun();
  }

  /** Stops the clean-up; entries stay as they are. */
  stop(): void {
    this.#stopCleanup?.();
    this.#stopCleanup = undefined;
    this.#timers.clearTimeout(this.#orphanTimer);
  }

  async #register(proxy: Proxy, name: string, connectedAt: Date): Promise<void> {
    const connected = {
      [WORKLOAD_CONTROLLER_ANNOTATION]: this.#o.instanceId,
      [CONNECTED_AT_ANNOTATION]: connectedAt.toISOString(),
    };
    const current = await this.#o.writer.get(proxy.namespace, name);
    if (current !== undefined) {
      // The proxy has connected to another replica since: the entry is that one's.
      if ((registrationMarks(current.entry).connectedAt ?? -Infinity) > connectedAt.getTime()) return;
      const annotations: Record<string, string> = { ...current.entry.meta.annotations, ...connected };
      delete annotations[DISCONNECTED_AT_ANNOTATION];
      await this.#o.writer.update(
        { ...current.entry, meta: { ...current.entry.meta, annotations } },
        current.resourceVersion,
      );
      this.#o.log.info("updated auto-registered WorkloadEntry", { entry: `${proxy.namespace}/${name}` });
      return;
    }
    const groupName = proxy.metadata.autoRegisterGroup!;
    const group = this.#o.store.get("WorkloadGroup", proxy.namespace, groupName) as
      | Resource<WorkloadGroupSpec>
      | undefined;
    if (group === undefined) {
      this.#o.log.warn("Cannot auto-register workload: WorkloadGroup not found", {
        proxy: proxy.id,
        group: `${proxy.namespace}/${groupName}`,
      });
      return;
    }
    await this.#o.writer.create(workloadEntryFromGroup(group, proxy, connected));
    this.#o.log.info("auto-registered WorkloadEntry", {
      proxy: proxy.id,
      entry: `${proxy.namespace}/${name}`,
    });
  }

  async #unregister(proxy: Proxy, name: string, connectedAt: Date, disconnectedAt: Date): Promise<void> {
    await this.#markDisconnected(proxy.namespace, name, connectedAt, disconnectedAt);
  }

  /**
   * Marks the entry disconnected at `disconnectedAt` if, read afresh, this replica still holds it through a
   * connection no later than `connectedAt`.
   */
  async #markDisconnected(
    namespace: string,
    name: string,
    connectedAt: Date,
    disconnectedAt: Date,
  ): Promise<void> {
    const current = await this.#o.writer.get(namespace, name);
    if (current === undefined) return;
    const { annotations = {} } = current.entry.meta;
    // A later connection (here or elsewhere) owns the entry now.
    if ((registrationMarks(current.entry).connectedAt ?? -Infinity) > connectedAt.getTime()) return;
    if (annotations[WORKLOAD_CONTROLLER_ANNOTATION] !== this.#o.instanceId) return;
    const next: Record<string, string> = { ...annotations };
    delete next[CONNECTED_AT_ANNOTATION];
    next[DISCONNECTED_AT_ANNOTATION] = disconnectedAt.toISOString();
    await this.#o.writer.update(
      { ...current.entry, meta: { ...current.entry.meta, annotations: next } },
      current.resourceVersion,
    );
    this.#o.log.info("marked auto-registered WorkloadEntry disconnected", { entry: `${namespace}/${name}` });
  }

  /**
   * Every grace period, marks disconnected (as of this replica's start) the entries it holds that a previous run
   * under the same identity registered and whose proxies have not come back: its liveness never ran out, so the
   * clean-up leader cannot tell them apart from live ones.
   */
  #releasePreviousRun(): void {
    // A connection of this run is no earlier than its start; one millisecond before it bounds the previous run's.
    const previousRun = new Date(this.#startedAt - 1);
    const startedAt = new Date(this.#startedAt);
    const check = async () => {
      for (const resource of this.#o.store.list("WorkloadEntry")) {
        const entry = resource as Resource<WorkloadEntrySpec>;
        const { annotations = {} } = entry.meta;
        if (!annotations[AUTO_REGISTRATION_GROUP_ANNOTATION]) continue;
        if (annotations[WORKLOAD_CONTROLLER_ANNOTATION] !== this.#o.instanceId) continue;
        if ((registrationMarks(entry).connectedAt ?? Infinity) >= this.#startedAt) continue;
        const key = `${entry.spec.network ?? ""}${entry.spec.address}`;
        if (this.#connections.has(key)) continue;
        const { namespace, name } = entry.meta;
        await this.#inOrder(key, async () => {
          try {
            await this.#markDisconnected(namespace, name, previousRun, startedAt);
          } catch (error) {
            this.#o.log.debug("entry of a previous run not marked disconnected", {
              entry: `${namespace}/${name}`,
              error: error instanceof Error ? error.message : String(error),
            });
          }
        });
      }
      if (this.#stopCleanup) {
        this.#orphanTimer = this.#timers.setTimeout(() => void check(), this.#o.gracePeriodMs);
      }
    };
    void check();
  }

  /** Runs `work` after every write queued before it for the same workload. */
  async #inOrder(key: string, work: () => Promise<void>): Promise<void> {
    const run = (this.#queued.get(key) ?? Promise.resolve()).then(work);
    this.#queued.set(key, run);
    try {
      await run;
    } finally {
      if (this.#queued.get(key) === run) this.#queued.delete(key);
    }
  }

  /** Runs `write` again after a conflict (read afresh) or a failure, up to `RETRIES` times. */
  async #retrying(what: string, proxy: Proxy, write: () => Promise<void>): Promise<void> {
    for (let attempt = 1;; attempt++) {
      try {
        await write();
        return;
      } catch (error) {
        if (attempt >= RETRIES) {
          this.#o.log.error(`auto-registration ${what} failed`, {
            proxy: proxy.id,
            attempts: attempt,
            error: error instanceof Error ? error.message : String(error),
          });
          return;
        }
        if (!(error instanceof WorkloadEntryConflictError)) {
          await new Promise((resolve) =>
            this.#timers.setTimeout(() => resolve(undefined), 100 * 2 ** attempt)
          );
        }
      }
    }
  }
}

function workloadKey(proxy: Proxy): string {
  return `${proxy.metadata.network ?? ""}${proxy.ipAddresses[0]}`;
}
