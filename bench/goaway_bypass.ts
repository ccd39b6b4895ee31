/**
 * Keeps the GOAWAY frames a peer sends away from nghttp2, and tells the session's listeners of them itself: an
 * experiment toward lifting the Deno pin (docs/deno_pin.md, "A way past the abort, tried and not adopted"), not
 * used by the programs. Deno 2.9.4–2.9.6 abort inside nghttp2 while it processes a GOAWAY it received. A GOAWAY
 * only says the sender opens no more streams and, for a server, which of ours it will still serve; its
 * connection ends soon after, so nothing else is lost by nghttp2 never seeing it:
 *
 * - a server has no streams of its own for a client's GOAWAY to cut short;
 * - a client's listeners (grpc-js: the channel moves new calls to a new connection) still hear `goaway`,
 *   with the frame's code, last stream id and debug data, as the runtime would have emitted it. Streams
 *   above the last stream id end when the connection does rather than at once.
 *
 * Unlike the runtime's own handling, the session is not closed on the frame: its peer closes the connection,
 * or its listeners close the session (grpc-js shuts the transport down).
 *
 * What it showed: the abort is not the received GOAWAY's fault. With every received GOAWAY kept from nghttp2,
 * the agent on 2.9.6 still died on the same assertion (which nghttp2 also checks after it sends a GOAWAY, as
 * every graceful close does) and once with SIGSEGV: the stream table is already corrupt when a GOAWAY walks it.
 *
 * The frames are taken out in the session's native handle's `receive`, which the runtime's `node:http2` feeds
 * every chunk read from the socket (after TLS). Where the handle is missing (another runtime or release), the
 * session is left as it is.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { EventEmitter } from "node:events";
import { CLIENT_PREFACE_BYTES, type GoawayFrame, GoawayFrameFilter } from "./goaway_frame_filter.ts";
import { runtimeSymbol } from "../shared/grpc/runtime_symbol.ts";

interface SessionHandle {
  receive(chunk: Uint8Array): unknown;
}

/** The session a bypass is set on, as far as it is used. */
type Session = EventEmitter & { readonly destroyed?: boolean };

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * From now on, the GOAWAY frames `session` reads bypass nghttp2 and are emitted as `goaway` events. A server
 * session reads the client's preface first (`prefaceBytes` {@link CLIENT_PREFACE_BYTES}); a client session
 * (0) has its handle only once connected. False when the runtime's handle is not found.
 */
export function bypassGoaway(session: Session, prefaceBytes: number): boolean {
  const key = runtimeSymbol(session, "kHandle");
  const handle = key === undefined ? undefined : (session as unknown as Record<symbol, unknown>)[key];
  if (typeof handle !== "object" || handle === null) return false;
  const target = handle as SessionHandle;
  const receive = target.receive;
  if (typeof receive !== "function") return false;
  let read: GoawayFrame[] = [];
  const filter = new GoawayFrameFilter(prefaceBytes, (frame) => read.push(frame));
  target.receive = function (this: SessionHandle, chunk: Uint8Array) {
    const kept = filter.filter(chunk);
    const result = kept === undefined ? undefined : receive.call(this, asBuffer(kept));
    if (read.length > 0) {
      const frames = read;
      read = [];
      // After the frames before them reached nghttp2, as the runtime would have told of them.
      for (const frame of frames) {
        if (session.destroyed) break;
        session.emit("goaway", frame.code, frame.lastStreamId, Buffer.from(frame.debugData));
      }
    }
    return result;
  };
  return true;
}

/** Sets {@link bypassGoaway} on every session `http2Server` opens. */
export function bypassGoawayOnSessions(http2Server: EventEmitter): void {
  http2Server.on("session", (session: Session) => bypassGoaway(session, CLIENT_PREFACE_BYTES));
}

/** The part of `node:http2` a client bypass wraps. */
export interface Http2Connector {
  connect(...args: never[]): Session;
}

/**
 * Sets {@link bypassGoaway} on every client session `http2.connect` makes from now on, in this process (grpc-js
 * opens its connections through it, and gives no other way to reach them); returns what undoes it.
 */
export function bypassGoawayOnConnect(http2: Http2Connector): () => void {
  const connect = http2.connect;
  http2.connect = function (this: unknown, ...args: never[]): Session {
    const session = connect.apply(this, args);
    session.once("connect", () => bypassGoaway(session, 0));
    return session;
  };
  return () => {
    http2.connect = connect;
  };
}
