/**
 * Watches the connections of one HTTP/2 server and reports each peer the transport drops for misbehaving: bytes
 * that are not HTTP/2, an HTTP/2 protocol violation (nghttp2 answers with a GOAWAY carrying an error), a failed
 * TLS handshake, or a handshake that does not finish in time (a stalled or trickling peer, which this guard
 * cuts). Only the offending connection is affected.
 *
 * @module
 */
import type { EventEmitter } from "node:events";
import { http2ErrorName, Http2GoawayScanner } from "./http2_goaway_scanner.ts";
import { systemTimers, type Timers } from "../time/timers.ts";

/** Why a peer was dropped. */
export type PeerDropReason = "not_http2" | "protocol_error" | "tls_error" | "handshake_timeout";

/** One dropped peer. */
export interface PeerDrop {
  readonly reason: PeerDropReason;
  /** `address:port` of the peer, or `unix socket`. */
  readonly peer: string;
  /** What was wrong: the HTTP/2 error code name, the TLS or parser error, or the timeout. */
  readonly detail: string;
}

/** How the guard treats connections. */
export interface PeerGuardOptions {
  /** True when the server terminates TLS: its sessions then write to the TLS socket, not the accepted one. */
  readonly secure: boolean;
  /** From accept until the peer's HTTP/2 SETTINGS arrive (TLS handshake included); then the peer is cut. */
  readonly handshakeTimeoutMs: number;
  /** Called once per dropped connection, when its socket has closed. */
  readonly onDrop: (drop: PeerDrop) => void;
  /** True while the server shuts down: the GOAWAYs it sends then are its own, not a peer's fault. */
  readonly isClosing: () => boolean;
  /** Times the handshake; default the runtime's. */
  readonly timers?: Timers;
}

const STATE = Symbol("meshPeerGuard");

/** nghttp2's complaint about a connection that does not start with the HTTP/2 client preface. */
const BAD_PREFACE = /bad client magic/i;

interface PeerState {
  readonly peer: string;
  timer?: unknown;
  /** Why the transport is dropping this peer; the most specific finding wins (see `noteDrop`). */
  verdict?: { reason: PeerDropReason; detail: string };
}

interface TaggedSocket {
  [STATE]?: PeerState;
  remoteAddress?: string;
  remotePort?: number;
  _parent?: TaggedSocket;
  write(chunk: unknown, ...rest: unknown[]): boolean;
  destroy(): void;
  once(event: "close", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
}

/**
 * Records why a peer is being dropped. Bytes that are not HTTP/2 also make nghttp2 send a GOAWAY, just before
 * its parser error is emitted: the parser's finding replaces the GOAWAY's, anything else keeps the first.
 */
function noteDrop(state: PeerState | undefined, reason: PeerDropReason, detail: string): void {
  if (state === undefined) return;
  if (state.verdict === undefined || (reason === "not_http2" && state.verdict.reason === "protocol_error")) {
    state.verdict = { reason, detail };
  }
}

/**
 * Attaches the guard to an HTTP/2 server (plaintext or secure). Its listeners run before the server's own, so
 * every connection is watched from its first byte; a drop is reported once, when the connection has closed.
 */
export function guardHttp2Server(server: EventEmitter, options: PeerGuardOptions): void {
  const timers = options.timers ?? systemTimers;
  const watchWrites = (socket: TaggedSocket, state: PeerState) => {
    const scanner = new Http2GoawayScanner();
    const write = socket.write.bind(socket);
    socket.write = (chunk: unknown, ...rest: unknown[]) => {
      if (chunk instanceof Uint8Array && scanner.goawayCode === undefined) {
        const code = scanner.feed(chunk);
        if (code !== undefined && !options.isClosing()) {
          noteDrop(state, "protocol_error", http2ErrorName(code));
        }
      }
      return write(chunk, ...rest);
    };
  };
  server.prependListener("connection", (raw: TaggedSocket) => {
    const peer = raw.remoteAddress ? `${raw.remoteAddress}:${raw.remotePort}` : "unix socket";
    const state: PeerState = { peer };
    raw[STATE] = state;
    state.timer = timers.setTimeout(() => {
      noteDrop(
        state,
        "handshake_timeout",
        `no HTTP/2 SETTINGS within ${options.handshakeTimeoutMs}ms of accept`,
      );
      raw.destroy();
    }, options.handshakeTimeoutMs);
    // The runtime reports a bad connection preface on the socket before it closes, and on the session after.
    raw.on("error", (error: Error) => {
      if (BAD_PREFACE.test(error.message) && !options.isClosing()) {
        noteDrop(state, "not_http2", error.message);
      }
    });
    raw.once("close", () => {
      timers.clearTimeout(state.timer);
      if (state.verdict !== undefined) options.onDrop({ peer, ...state.verdict });
    });
    if (!options.secure) watchWrites(raw, state);
  });
  if (options.secure) {
    server.prependListener("secureConnection", (tlsSocket: TaggedSocket) => {
      const state = tlsSocket._parent?.[STATE];
      if (state === undefined) return;
      tlsSocket[STATE] = state;
      watchWrites(tlsSocket, state);
    });
    server.on("tlsClientError", (error: Error, tlsSocket: TaggedSocket) => {
      if (!options.isClosing()) noteDrop(tlsSocket?._parent?.[STATE], "tls_error", error.message);
    });
  }
  server.on("session", (session: EventEmitter & { socket?: TaggedSocket }) => {
    const state = session.socket?.[STATE];
    if (state === undefined) return;
    session.once("remoteSettings", () => timers.clearTimeout(state.timer));
    session.on("error", (error: Error & { code?: string }) => {
      // Only nghttp2's own findings count: a socket reset is a peer leaving, and ERR_HTTP2_SESSION_ERROR is the
      // peer's own GOAWAY with an error.
      if (error.code !== "ERR_HTTP2_ERROR" || options.isClosing()) return;
      noteDrop(state, BAD_PREFACE.test(error.message) ? "not_http2" : "protocol_error", error.message);
    });
  });
}
