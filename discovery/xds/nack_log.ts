/**
 * Logs the NACKs of proxies, at most one line per proxy per period: a proxy's first NACK in full, then one
 * line per period for its next NACK, saying how many were left out since the last line; what was left out
 * when the proxy's last stream closes gets one line too. The proxy's error text is logged as an escaped
 * excerpt. A peer sending thousands of NACKs with different texts wrote a line for each, megabytes a second;
 * every NACK is still counted in `discovery_total_xds_rejects`.
 *
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import { excerpt } from "@mesh/shared/log/excerpt";

/** Longest part of a proxy's error text a log line quotes, in characters. */
export const NACK_TEXT_LOGGED = 512;

/** How a {@link NackLog} paces its lines. */
export interface NackLogOptions {
  /** Milliseconds on a monotonic scale. */
  readonly now: () => number;
  /** At most one line per proxy per this many milliseconds after its first (default 10 s). */
  readonly periodMs?: number;
}

/** What one rejection says, as the connection read it. */
export interface NackFields {
  /** The connection that received it. */
  readonly connection: string;
  /** The short type name. */
  readonly type: string;
  /** Nonce of the rejected response. */
  readonly nonce: string;
  /** gRPC code name the proxy gave. */
  readonly code: string;
  /** The proxy's error text, whole: it is cut here. */
  readonly error: string;
}

interface ProxyNacks {
  lastLoggedMs: number;
  /** NACKs not logged since the last line. */
  suppressed: number;
}

/** The NACK lines of every proxy; one per server. */
export class NackLog {
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #periodMs: number;
  readonly #byProxy = new Map<string, ProxyNacks>();

  /** Logs through `logger`, pacing lines by `options.now`. */
  constructor(logger: Logger, options: NackLogOptions) {
    this.#logger = logger;
    this.#now = options.now;
    this.#periodMs = options.periodMs ?? 10_000;
  }

  /** A NACK of `proxyId`: logged when it is the proxy's first, or the first since a period passed. */
  record(proxyId: string, nack: NackFields): void {
    const now = this.#now();
    const state = this.#byProxy.get(proxyId);
    if (state !== undefined && now - state.lastLoggedMs < this.#periodMs) {
      state.suppressed++;
      return;
    }
    const fields = { proxy: proxyId, ...nack, error: excerpt(nack.error, NACK_TEXT_LOGGED) };
    if (state === undefined) {
      this.#byProxy.set(proxyId, { lastLoggedMs: now, suppressed: 0 });
      this.#logger.warn("proxy rejected config", fields);
      return;
    }
    this.#logger.warn("proxy rejected config", { ...fields, notLoggedSinceLastLine: state.suppressed });
    state.lastLoggedMs = now;
    state.suppressed = 0;
  }

  /** The proxy's last stream closed: what was not logged of it gets one line, and it is forgotten. */
  forget(proxyId: string): void {
    const state = this.#byProxy.get(proxyId);
    if (state === undefined) return;
    this.#byProxy.delete(proxyId);
    if (state.suppressed > 0) {
      this.#logger.warn("proxy rejected config more times than were logged", {
        proxy: proxyId,
        notLogged: state.suppressed,
      });
    }
  }

  /** Proxies with a NACK on record. */
  get size(): number {
    return this.#byProxy.size;
  }
}
