/** A connection's place in a listener's {@link ConnectionSlots}. */
export interface ConnectionSlot {
  /** The client's address. */
  readonly peer: string;
  /**
   * Marks whether the connection may be closed to make room: true while no request is in progress (between
   * requests, or during its handshake or header block). The time it last became so orders evictions.
   */
  evictable(yes: boolean): void;
  /** Gives the slot back and closes the connection; later calls do nothing. */
  close(): void;
}

/** Why a connection got no slot: the listener's bound, or its address's. */
export type SlotRefusal = "connections" | "peer_connections";

/**
 * The connections of one listener, in all and per client address. Past a bound, the connection that has been
 * evictable the longest in the same scope (the address's, then the listener's) is closed to make room; only
 * when none is evictable is the newcomer refused.
 */
export class ConnectionSlots {
  readonly #open = new Set<Entry>();
  readonly #byPeer = new Map<string, Set<Entry>>();
  #sequence = 0;

  /** `onEvict` hears of each connection closed to make room, with its address. */
  constructor(
    readonly limits: { readonly maxConnections: number; readonly maxConnectionsPerPeer: number },
    readonly onEvict: (peer: string) => void = () => {},
  ) {}

  /** Connections holding a slot. */
  get size(): number {
    return this.#open.size;
  }

  /**
   * A slot for a connection from `peer`, which `close` closes; evictable at first. The bound that refused it
   * when there is no room.
   */
  claim(peer: string, close: () => void): ConnectionSlot | SlotRefusal {
    const own = this.#byPeer.get(peer);
    if (own !== undefined && own.size >= this.limits.maxConnectionsPerPeer && !this.#evictFrom(own)) {
      return "peer_connections";
    }
    if (this.#open.size >= this.limits.maxConnections && !this.#evictFrom(this.#open)) return "connections";
    const entry = new Entry(peer, ++this.#sequence, () => ++this.#sequence, close, () => {
      this.#open.delete(entry);
      const mine = this.#byPeer.get(peer);
      mine?.delete(entry);
      if (mine?.size === 0) this.#byPeer.delete(peer);
    });
    this.#open.add(entry);
    this.#byPeer.set(peer, (this.#byPeer.get(peer) ?? new Set()).add(entry));
    return entry;
  }

  /** Closes every connection. */
  closeAll(): void {
    for (const entry of this.#open) entry.close();
  }

  #evictFrom(entries: Iterable<Entry>): boolean {
    let oldest: Entry | undefined;
    for (const entry of entries) {
      if (entry.since === undefined) continue;
      if (oldest === undefined || entry.since < oldest.since!) oldest = entry;
    }
    if (oldest === undefined) return false;
    this.onEvict(oldest.peer);
    oldest.close();
    return true;
  }
}

class Entry implements ConnectionSlot {
  #closed = false;

  constructor(
    readonly peer: string,
    /** When the connection last became evictable (a sequence number); undefined while it is not. */
    public since: number | undefined,
    readonly next: () => number,
    readonly closeConnection: () => void,
    readonly release: () => void,
  ) {}

  evictable(yes: boolean): void {
    if (!yes) this.since = undefined;
    else this.since ??= this.next();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.release();
    this.closeConnection();
  }
}
