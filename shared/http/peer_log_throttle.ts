/** Peers remembered at most; past this the longest-remembered is forgotten first. */
const MAX_PEERS = 4096;

/**
 * Decides which refusals are logged: at most one line per peer per period, so a flood from one address costs
 * one log line a minute and a flood from many addresses a bounded number of remembered peers.
 */
export class PeerLogThrottle {
  readonly #last = new Map<string, number>();

  /** `now` is a monotonic clock in milliseconds. */
  constructor(readonly periodMs = 60_000, readonly now: () => number = () => performance.now()) {}

  /** True when `peer` has not been logged within the period; it then counts as logged now. */
  take(peer: string): boolean {
    const now = this.now();
    const last = this.#last.get(peer);
    if (last !== undefined && now - last < this.periodMs) return false;
    this.#last.delete(peer);
    for (const [key, at] of this.#last) {
      if (now - at < this.periodMs && this.#last.size < MAX_PEERS) break;
      this.#last.delete(key);
    }
    this.#last.set(peer, now);
    return true;
  }
}
