/**
 * Server-wide and per-peer-address bounds on the connections and streams of gRPC listeners. The per-connection
 * stream cap (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS) leaves a peer free to open more connections; these bounds
 * hold over all of them, and over every listener that shares one `GrpcAdmission`.
 *
 * A peer address also has a budget of new connections a minute. Deno 2.9.3 keeps about 23 KiB of every closed
 * HTTP/2 session for good (docs/deno_pin.md), so a client that opens and closes connections without end would
 * grow the server without end; a connection refused on accept never gets a session, and costs nothing after.
 *
 * @module
 */
import { KeyedRateLimiter } from "../time/keyed_rate_limiter.ts";

/** How many connections and streams may be open at once; every bound is at least 1. */
export interface GrpcAdmissionLimits {
  /** Connections open at once over every listener sharing the admission. */
  readonly maxConnections: number;
  /** Connections open at once from one peer address. */
  readonly maxConnectionsPerPeer: number;
  /** Streams (calls) open at once over every connection. */
  readonly maxStreams: number;
  /** Streams open at once from one peer address, over all its connections. */
  readonly maxStreamsPerPeer: number;
  /** New connections one peer address may open a minute; as many may come at once. */
  readonly connectionRatePerPeer: number;
}

/** The setting that sets each bound, named in refusals so an operator knows what to raise. */
export type GrpcAdmissionSettings = Readonly<Record<keyof GrpcAdmissionLimits, string>>;

/** Which bound refused a connection or stream. */
export type AdmissionRefusalReason =
  | "server_connection_limit"
  | "peer_connection_limit"
  | "peer_connection_rate"
  | "server_stream_limit"
  | "peer_stream_limit";

/** A connection or stream that was not admitted. */
export interface AdmissionRefusal {
  readonly reason: AdmissionRefusalReason;
  /** The peer address the bound was counted for (`unix socket` on a Unix socket). */
  readonly peer: string;
  /** Names the bound, its value and its setting. */
  readonly message: string;
}

/** An admitted connection or stream; `release` (idempotent) frees its place once it has closed. */
export interface AdmissionTicket {
  release(): void;
}

/** The largest value a bound may take. */
export const MAX_ADMISSION_LIMIT = 10_000_000;

/** Counted peer of a connection without an address (a Unix socket). */
const UNIX_PEER = "unix socket";

/**
 * Peer addresses whose connection budget is tracked at most. A budget refilled is forgotten, so this binds only
 * when more addresses than this connected within a minute; the one seen least recently is forgotten first.
 */
const MAX_RATED_PEERS = 65_536;

/**
 * The key a remote address is counted under: IPv4-mapped IPv6 addresses count as the IPv4 address they carry.
 */
export function peerAddressKey(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined || remoteAddress === "") return UNIX_PEER;
  return remoteAddress.toLowerCase().startsWith("::ffff:") && remoteAddress.includes(".")
    ? remoteAddress.slice(7)
    : remoteAddress;
}

interface PeerCounts {
  connections: number;
  streams: number;
}

/**
 * Counts open connections and streams, server-wide and per peer address, and admits a new one only while every
 * bound holds. A peer's entry lives only while it has something open, so the table is bounded by the
 * connections admitted.
 */
export class GrpcAdmission {
  readonly limits: Readonly<GrpcAdmissionLimits>;
  readonly #settings: GrpcAdmissionSettings;
  readonly #peers = new Map<string, PeerCounts>();
  readonly #connectionRates: KeyedRateLimiter;
  #connections = 0;
  #streams = 0;

  /**
   * `now` is monotonic milliseconds, for the connection budgets.
   *
   * @throws {RangeError} naming the setting of a bound that is not an integer from 1 to `MAX_ADMISSION_LIMIT`
   */
  constructor(
    limits: GrpcAdmissionLimits,
    settings: GrpcAdmissionSettings,
    now: () => number = () => performance.now(),
  ) {
    for (const key of Object.keys(settings) as (keyof GrpcAdmissionLimits)[]) {
      const value = limits[key];
      if (!Number.isInteger(value) || value < 1 || value > MAX_ADMISSION_LIMIT) {
        throw new RangeError(
          `Invalid ${settings[key]} "${value}": expected an integer from 1 to ${MAX_ADMISSION_LIMIT}`,
        );
      }
    }
    this.limits = Object.freeze({ ...limits });
    this.#settings = settings;
    this.#connectionRates = new KeyedRateLimiter({
      qps: limits.connectionRatePerPeer / 60,
      burst: limits.connectionRatePerPeer,
      maxKeys: MAX_RATED_PEERS,
    }, now);
  }

  /** Connections open now. */
  get connections(): number {
    return this.#connections;
  }

  /** Streams open now. */
  get streams(): number {
    return this.#streams;
  }

  /** Peer addresses with a connection or stream open now. */
  get peers(): number {
    return this.#peers.size;
  }

  /** Admits a connection from `remoteAddress`, or says which bound refuses it. */
  admitConnection(remoteAddress: string | undefined): AdmissionTicket | AdmissionRefusal {
    const peer = peerAddressKey(remoteAddress);
    const counts = this.#peers.get(peer);
    if (this.#connections >= this.limits.maxConnections) {
      return this.#refusal("server_connection_limit", peer, "maxConnections", "connections are open");
    }
    if ((counts?.connections ?? 0) >= this.limits.maxConnectionsPerPeer) {
      return this.#refusal("peer_connection_limit", peer, "maxConnectionsPerPeer", "connections are open");
    }
    if (peer !== UNIX_PEER) {
      const budget = this.#connectionRates.take(peer);
      if (!budget.allowed) {
        const limit = this.limits.connectionRatePerPeer;
        const setting = this.#settings.connectionRatePerPeer;
        return {
          reason: "peer_connection_rate",
          peer,
          message:
            `peer address ${peer} opened ${limit} connections within a minute, the most ${setting}=${limit} ` +
            `allows; retry in ${Math.ceil(budget.retryAfterMs / 1000)} s`,
        };
      }
    }
    this.#connections++;
    this.#countsOf(peer, counts).connections++;
    return this.#ticket(peer, "connections");
  }

  /** Admits a stream from `remoteAddress`, or says which bound refuses it. */
  admitStream(remoteAddress: string | undefined): AdmissionTicket | AdmissionRefusal {
    const peer = peerAddressKey(remoteAddress);
    const counts = this.#peers.get(peer);
    if (this.#streams >= this.limits.maxStreams) {
      return this.#refusal("server_stream_limit", peer, "maxStreams", "streams are open");
    }
    if ((counts?.streams ?? 0) >= this.limits.maxStreamsPerPeer) {
      return this.#refusal("peer_stream_limit", peer, "maxStreamsPerPeer", "streams are open");
    }
    this.#streams++;
    this.#countsOf(peer, counts).streams++;
    return this.#ticket(peer, "streams");
  }

  #countsOf(peer: string, counts: PeerCounts | undefined): PeerCounts {
    if (counts !== undefined) return counts;
    const created = { connections: 0, streams: 0 };
    this.#peers.set(peer, created);
    return created;
  }

  #ticket(peer: string, kind: "connections" | "streams"): AdmissionTicket {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        if (kind === "connections") this.#connections--;
        else this.#streams--;
        const counts = this.#peers.get(peer)!;
        counts[kind]--;
        if (counts.connections === 0 && counts.streams === 0) this.#peers.delete(peer);
      },
    };
  }

  #refusal(
    reason: AdmissionRefusalReason,
    peer: string,
    bound: keyof GrpcAdmissionLimits,
    what: string,
  ): AdmissionRefusal {
    const limit = this.limits[bound];
    const scope = bound.endsWith("PerPeer") ? `from peer address ${peer}` : "on this server";
    return {
      reason,
      peer,
      message: `${limit} ${what} ${scope}, the most ${this.#settings[bound]}=${limit} allows; retry later`,
    };
  }
}

/** True when `result` is a refusal rather than a ticket. */
export function isRefusal(result: AdmissionTicket | AdmissionRefusal): result is AdmissionRefusal {
  return "reason" in result;
}
