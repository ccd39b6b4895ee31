/**
 * The info lines of proxies connecting and leaving, a budget of them per peer address each minute: a fleet's
 * proxies each have their own, and one client that opens and cancels streams as fast as it can costs a few
 * lines a minute instead of two per stream. Refused streams cost one warn line per peer address a minute, and
 * streams turned away while the server is not ready one info line a minute in all: that is the server's state,
 * not the peers' fault, and a fleet reconnecting to a restarted server would otherwise log a line per proxy.
 * Requests left unanswered cost one warn line per peer address and reason a minute. A line logged after some
 * were passed over says how many.
 *
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import { PEER_LOG_MAX_PEERS, PEER_LOG_PERIOD_MS, PeerLogLimiter } from "@mesh/shared/log/peer_log_limiter";
import { grpcCodeName } from "@mesh/shared/grpc/grpc_status";

/** Lines of each kind (connected, disconnected) one peer address may log each minute. */
export const CONNECTION_LOG_LINES_PER_MINUTE = 100;

/** What a line says about a stream. */
export interface LoggedConnection {
  readonly id: string;
  /** As grpc-js names it: address and port, or a socket path. */
  readonly peer: string;
}

/** The address of a grpc-js peer name without its port (`[::1]:5` → `::1`, `10.0.0.1:5` → `10.0.0.1`). */
export function peerHost(peer: string): string {
  if (peer.startsWith("[")) {
    const end = peer.indexOf("]");
    return end < 0 ? peer : peer.slice(1, end);
  }
  const colon = peer.lastIndexOf(":");
  // Only an IPv4 address or a name carries one colon before its port; a socket path has none.
  return colon > 0 && peer.indexOf(":") === colon && /^\d+$/.test(peer.slice(colon + 1))
    ? peer.slice(0, colon)
    : peer;
}

/** Logs connections and disconnections within each peer address's budget. */
export class ConnectionLog {
  readonly #connected: PeerLogLimiter;
  readonly #disconnected: PeerLogLimiter;
  readonly #refused: PeerLogLimiter;
  /** Keyed by peer address and message. */
  readonly #unanswered: PeerLogLimiter;
  /** Keyed by one constant: streams turned away while not ready share one line a minute. */
  readonly #notReady: PeerLogLimiter;
  /** The peer address of each open stream: once a stream is gone grpc-js no longer knows it. */
  readonly #hosts = new Map<string, string>();

  constructor(private readonly logger: Logger, now: () => number = () => performance.now()) {
    const limiter = () =>
      new PeerLogLimiter(PEER_LOG_PERIOD_MS, now, PEER_LOG_MAX_PEERS, CONNECTION_LOG_LINES_PER_MINUTE);
    this.#connected = limiter();
    this.#disconnected = limiter();
    this.#refused = new PeerLogLimiter(PEER_LOG_PERIOD_MS, now);
    this.#unanswered = new PeerLogLimiter(PEER_LOG_PERIOD_MS, now);
    this.#notReady = new PeerLogLimiter(PEER_LOG_PERIOD_MS, now);
  }

  /** The server ended a stream over what its peer sent (`peer` as grpc-js names it). */
  refused(peer: string, code: number, details: string): void {
    // The line names the peer so an operator can find a misbehaving client.
    this.#line(this.#refused, peerHost(peer), "warn", "refused ADS stream", {
      peer,
      code: grpcCodeName(code),
      details,
    });
  }

  /**
   * A request the server leaves unanswered (`msg` says why: no type URL, a type no generator serves): one warn
   * line per peer address and message a minute, whatever the streams it comes on.
   */
  unanswered(connection: LoggedConnection, msg: string, fields: Record<string, unknown> = {}): void {
    this.#line(this.#unanswered, `${peerHost(connection.peer)} ${msg}`, "warn", msg, {
      connection: connection.id,
      ...fields,
    });
  }

  /** A stream was turned away because the server is not ready to serve yet (`details` says why). */
  notReady(peer: string, details: string): void {
    this.#line(this.#notReady, "", "info", "turned an ADS stream away: not ready", { peer, details });
  }

  /** A stream was admitted; `fields` are added to the line. */
  connected(connection: LoggedConnection, fields: Record<string, unknown>): void {
    const host = peerHost(connection.peer);
    this.#hosts.set(connection.id, host);
    this.#line(this.#connected, host, "info", "proxy connected", {
      connection: connection.id,
      ...fields,
      peer: connection.peer,
    });
  }

  /** A stream ended; its address is the one it connected from. */
  disconnected(connection: LoggedConnection): void {
    const host = this.#hosts.get(connection.id) ?? peerHost(connection.peer);
    this.#hosts.delete(connection.id);
    this.#line(this.#disconnected, host, "info", "proxy disconnected", { connection: connection.id });
  }

  /** Logs within `limiter`'s budget for `key`; a line after some were passed over says how many. */
  #line(
    limiter: PeerLogLimiter,
    key: string,
    level: "info" | "warn",
    msg: string,
    fields: Record<string, unknown>,
  ): void {
    limiter.log(key, (passedOver) => {
      this.logger[level](msg, { ...fields, ...(passedOver > 0 && { notLogged: passedOver }) });
    });
  }
}
