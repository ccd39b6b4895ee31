/** A connection's place in a listener's {@link ConnectionSlots}. */
export interface ConnectionSlot {
  /** The client's address. */
  readonly peer: string;
  /**
   * Marks whether the connection may be closed to make room: true while no request is in progress (between
   * requests, or during its handshake or header block). The time it last became so orders evictions.
   */
  evictable(yes: boolean): void;
  /**
   * Marks that the connection has had an answer. Past a bound, connections that have had one are closed before
   * those still waiting for their first: their clients were served, while a fresh one (a probe) would be turned
   * away with nothing.
   */
  served(): void;
  /**
   * Closes the connection and gives the slot back, once the connection's close has taken effect (see
   * {@link ConnectionSlots.claim}); later calls do nothing. A closed slot is never chosen to make room.
   */
  close(): void;
}

/** Why a connection got no slot: the listener's bound, or its address's. */
export type SlotRefusal = "connections" | "peer_connections";

/**
 * A connection got no slot yet: room could only be made by closing connections claimed in this round, which
 * have not had a turn to be read. Start a new round once they have, and claim again.
 */
export type SlotWait = "wait";

/**
 * The connections of one listener, in all and per client address. Past a bound, the connection that has been
 * evictable the longest in the same scope (the address's, then the listener's) is closed to make room, those
 * already served first; only when none is evictable is the newcomer refused. A connection claimed in the
 * current round is not closed to make room: a listener that drains a burst of queued connections would
 * otherwise close each before it was read, a probe queued among them included.
 */
export class ConnectionSlots {
  readonly #open = new Set<Entry>();
  readonly #byPeer = new Map<string, Set<Entry>>();
  #sequence = 0;
  #round = 0;

  /**
   * `onEvict` hears of each connection closed to make room, with its address; `onRoom` of each slot given back
   * or become evictable, where a connection waiting for room may now find some.
   */
  constructor(
    readonly limits: { readonly maxConnections: number; readonly maxConnectionsPerPeer: number },
    readonly onEvict: (peer: string) => void = () => {},
    readonly onRoom: () => void = () => {},
  ) {}

  /** Connections holding a slot. */
  get size(): number {
    return this.#open.size;
  }

  /**
   * A slot for a connection from `peer`, which `close` closes; evictable at first. When `close` returns a
   * promise the connection stays open until it settles (a write the runtime finishes first), and the slot is
   * held until then. The bound that refused it when there is no room, or "wait" when room can be made in a
   * later round.
   */
  claim(peer: string, close: () => Promise<void> | void): ConnectionSlot | SlotRefusal | SlotWait {
    const own = this.#byPeer.get(peer);
    if (own !== undefined && own.size >= this.limits.maxConnectionsPerPeer) {
      const room = this.#makeRoom(own);
      if (room !== "made") return room === "wait" ? room : "peer_connections";
    }
    if (this.#open.size >= this.limits.maxConnections) {
      const room = this.#makeRoom(this.#open);
      if (room !== "made") return room === "wait" ? room : "connections";
    }
    const entry = new Entry(
      peer,
      this.#round,
      ++this.#sequence,
      () => {
        this.onRoom();
        return ++this.#sequence;
      },
      close,
      () => {
        this.#open.delete(entry);
        const mine = this.#byPeer.get(peer);
        mine?.delete(entry);
        if (mine?.size === 0) this.#byPeer.delete(peer);
        this.onRoom();
      },
    );
    this.#open.add(entry);
    this.#byPeer.set(peer, (this.#byPeer.get(peer) ?? new Set()).add(entry));
    return entry;
  }

  /** Starts a new round: connections claimed so far have had their turn and may be closed to make room. */
  newRound(): void {
    this.#round++;
  }

  /** Closes every connection. */
  closeAll(): void {
    for (const entry of this.#open) entry.close();
  }

  #makeRoom(entries: Iterable<Entry>): "made" | "wait" | "none" {
    let oldest: Entry | undefined;
    let waiting = false;
    for (const entry of entries) {
      if (entry.since === undefined) continue;
      if (entry.round === this.#round) {
        waiting = true;
      } else if (oldest === undefined || before(entry, oldest)) {
        oldest = entry;
      }
    }
    if (oldest === undefined) return waiting ? "wait" : "none";
    this.onEvict(oldest.peer);
    oldest.close();
    return "made";
  }
}

/** Whether `a` is closed before `b`: one already served first, then the one evictable the longest. */
function before(a: Entry, b: Entry): boolean {
  if (a.wasServed !== b.wasServed) return a.wasServed;
  return a.since! < b.since!;
}

class Entry implements ConnectionSlot {
  #closed = false;
  /** Whether the connection has had an answer. */
  wasServed = false;

  constructor(
    readonly peer: string,
    /** The round the connection was claimed in. */
    readonly round: number,
    /** When the connection last became evictable (a sequence number); undefined while it is not. */
    public since: number | undefined,
    readonly next: () => number,
    readonly closeConnection: () => Promise<void> | void,
    readonly release: () => void,
  ) {}

  evictable(yes: boolean): void {
    if (this.#closed) return;
    if (!yes) this.since = undefined;
    else this.since ??= this.next();
  }

  served(): void {
    this.wasServed = true;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.since = undefined;
    const closing = this.closeConnection();
    if (closing instanceof Promise) closing.then(this.release, this.release);
    else this.release();
  }
}
