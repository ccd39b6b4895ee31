import { systemTimers, type Timers } from "@mesh/shared/time/timers";

/** What a sync gate watches and what it asks for. */
export interface SyncGateOptions {
  /** Why the sources are not all synced yet (the first unsynced source named), or undefined once they are. */
  readonly unsynced: () => string | undefined;
  /** Asks for a full push, so that a snapshot is built after the sources synced even when no event follows. */
  readonly requestFull: () => void;
  /** How often the sources are checked until they have synced (ms). */
  readonly pollMs?: number;
  /** Drive the checks; the runtime's when omitted. */
  readonly timers?: Timers;
}

/**
 * Holds discovery back until it can serve a complete view, as the reference does before it accepts its first
 * stream: a snapshot built before every source listed its state would hand a connecting proxy clusters, routes
 * and endpoints of a partial mesh (a route to a port the service does not have, a service missing altogether),
 * and a proxy applies what it is sent.
 *
 * Snapshots read the sources live, so a snapshot whose build began after every source synced holds all of
 * their initial state; the gate opens when such a snapshot is published and stays open (a source that relists
 * later keeps serving from its cache, as the reference's does). Until then {@link waiting} says why.
 */
export class SyncGate {
  readonly #options: SyncGateOptions;
  readonly #timers: Timers;
  #open = false;
  /** A full push was asked for since the sources synced and no build that began after it has finished. */
  #requested = false;
  #timer: unknown;
  #closed = false;

  /** Checks nothing until {@link start}. */
  constructor(options: SyncGateOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
  }

  /** True once a snapshot built after every source synced has been published. */
  get open(): boolean {
    return this.#open;
  }

  /** Why streams are refused for now, or undefined once the gate is open. */
  waiting(): string | undefined {
    if (this.#open) return undefined;
    const unsynced = this.#options.unsynced();
    return unsynced === undefined
      ? "building the first configuration snapshot since every source synced"
      : `waiting for every source to sync (${unsynced})`;
  }

  /** Called as a snapshot build begins; the answer goes back to {@link built} when it ends. */
  buildStarting(): boolean {
    return this.#open || this.#options.unsynced() === undefined;
  }

  /** A build ended: `complete` is what {@link buildStarting} said for it, `published` whether it took effect. */
  built(complete: boolean, published: boolean): void {
    if (!complete) return;
    if (published) {
      this.#open = true;
      this.#stopPolling();
    } else {
      // A failed build leaves the gate shut; the next check asks again.
      this.#requested = false;
    }
  }

  /**
   * Checks the sources now and every `pollMs` until the gate opens; asks for one full push when they have synced
   * with the gate still shut.
   */
  start(): void {
    this.#check();
  }

  /** Stops checking. */
  close(): void {
    this.#closed = true;
    this.#stopPolling();
  }

  #check = (): void => {
    this.#timer = undefined;
    if (this.#open || this.#closed) return;
    if (!this.#requested && this.#options.unsynced() === undefined) {
      this.#requested = true;
      this.#options.requestFull();
    }
    this.#timer = this.#timers.setTimeout(this.#check, this.#options.pollMs ?? 50);
  };

  #stopPolling(): void {
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
