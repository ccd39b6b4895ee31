/**
 * Lets a line about one peer be logged at most once (or `linesPerPeriod` times) per period, counting what it
 * passed over, so a peer that hammers a bound costs one log line a minute rather than one per attempt.
 *
 * @module
 */

/** How often a line about one peer may be logged, by default. */
export const PEER_LOG_PERIOD_MS = 60_000;

/** Peers remembered at most; past this, stale ones are forgotten, and while none is stale nothing is logged. */
export const PEER_LOG_MAX_PEERS = 4096;

/** Rate-limits log lines per peer; bounded in the peers it remembers. */
export class PeerLogLimiter {
  readonly #last = new Map<string, { at: number; lines: number; passedOver: number }>();

  /** @throws {RangeError} when `linesPerPeriod` is not a positive integer */
  constructor(
    private readonly periodMs = PEER_LOG_PERIOD_MS,
    private readonly now: () => number = () => performance.now(),
    private readonly maxPeers = PEER_LOG_MAX_PEERS,
    private readonly linesPerPeriod = 1,
  ) {
    if (!Number.isSafeInteger(linesPerPeriod) || linesPerPeriod < 1) {
      throw new RangeError(`Log lines per period "${linesPerPeriod}": expected a positive integer`);
    }
  }

  /**
   * Whether to log about `peer` now: the number of lines passed over for it since its last line (0 the first
   * time), or undefined to pass this one over.
   */
  take(peer: string): number | undefined {
    const now = this.now();
    const seen = this.#last.get(peer);
    if (seen !== undefined && now - seen.at < this.periodMs) {
      // Lines are passed over only once a period's lines are spent, so none was before this one.
      if (seen.lines < this.linesPerPeriod) {
        seen.lines++;
        return 0;
      }
      seen.passedOver++;
      return undefined;
    }
    if (seen === undefined && this.#last.size >= this.maxPeers) {
      for (const [key, entry] of this.#last) {
        if (now - entry.at >= this.periodMs) this.#last.delete(key);
      }
      if (this.#last.size >= this.maxPeers) return undefined;
    }
    this.#last.set(peer, { at: now, lines: 1, passedOver: 0 });
    return seen?.passedOver ?? 0;
  }

  /** Calls `line` with the lines passed over for `peer` since its last one, unless {@link take} passes it over. */
  log(peer: string, line: (passedOver: number) => void): void {
    const passedOver = this.take(peer);
    if (passedOver !== undefined) line(passedOver);
  }
}
