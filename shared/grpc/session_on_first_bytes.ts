/**
 * Opens a connection's HTTP/2 session only once its peer has sent a first byte (after TLS, on a secure server).
 * Deno 2.9.3's `node:http2` never frees a session's native state, about 23 KiB a connection (docs/deno_pin.md):
 * a runtime that opens a session on accept leaks that much for every connection that is opened and closed
 * without a word, a port scan, a load balancer's TCP health check, a TLS probe, or a client doing nothing
 * else as fast as it can (`bench:abuse --attack handshake-flood`: 1.5 GiB in 20 s from one client). Such a
 * connection now costs its socket alone, which is freed when it closes.
 *
 * The first chunk read is put back before the session starts, and the session reads it as it would have; a peer
 * that sends nothing meanwhile is cut by the peer guard's handshake deadline, which runs from accept.
 *
 * @module
 */
import type { EventEmitter } from "node:events";

/** The part of a socket this needs. */
interface WaitingSocket {
  readonly destroyed: boolean;
  once(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  removeListener(event: "error", listener: (error: Error) => void): unknown;
  pause(): unknown;
  unshift(chunk: Uint8Array): void;
  destroy(): void;
}

type Listener = (this: unknown, socket: WaitingSocket) => void;

/**
 * Defers the runtime's session start on `http2Server` (its `connection` listeners, or `secureConnection` on a
 * secure server) until each connection's first bytes arrive. Call it before anything else listens to that event.
 *
 * @throws {TypeError} when the runtime starts no session from that event (another runtime or release): serving
 *   unguarded would bring the leak back unnoticed
 */
export function openSessionsOnFirstBytes(http2Server: EventEmitter, secure: boolean): void {
  const event = secure ? "secureConnection" : "connection";
  const starters = http2Server.listeners(event) as Listener[];
  if (starters.length === 0) {
    throw new TypeError(
      `node:http2 starts no session from its server's "${event}" event: shared/grpc/session_on_first_bytes.ts needs a new hook`,
    );
  }
  for (const starter of starters) http2Server.removeListener(event, starter);
  http2Server.on(event, function (this: unknown, socket: WaitingSocket) {
    if (socket.destroyed) return;
    // Until the session owns the socket, an error (a reset) ends the connection rather than the process.
    const onError = () => socket.destroy();
    socket.on("error", onError);
    socket.once("data", (chunk) => {
      socket.pause();
      socket.unshift(chunk);
      socket.removeListener("error", onError);
      for (const starter of starters) starter.call(this, socket);
    });
  });
}
