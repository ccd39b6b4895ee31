/**
 * Writes what an HTTP/2 session has framed to its socket in one system call per drain instead of one per
 * frame.
 *
 * Deno's `node:http2` drains nghttp2 one frame at a time (`getOutgoingChunk`) and hands each frame to the
 * socket on its own (`socket.write`), so a 64 KiB piece of a response becomes four 16 KiB socket writes, each
 * with its own write request and system call; Node's own HTTP/2 gathers a drain into one vectored write. The
 * socket is corked from the first frame of a drain until the drain ends (the frame source is empty), and its
 * frames then leave together as one vectored write of the same bytes in the same order.
 *
 * The socket is uncorked before the call that finds the source empty returns, so nothing the runtime does
 * after the drain finds frames held back; a session closed from inside a drain ends its socket, which writes
 * what is corked first; a drain that stops early (its socket destroyed) is uncorked by a job queued when it
 * corked.
 *
 * @module
 */
import type { EventEmitter } from "node:events";

/** What this module reads of an HTTP/2 session's socket. */
interface CorkableSocket {
  cork(): void;
  uncork(): void;
  readonly writableCorked?: number;
}

/** What this module wraps of the runtime's native HTTP/2 session. */
interface SessionHandle {
  getOutgoingChunk: () => Uint8Array | undefined | null;
}

/** The runtime's native session under `session` (a `node:http2` session); undefined when the shape differs. */
function handleOf(session: object): SessionHandle | undefined {
  const key = Object.getOwnPropertySymbols(session).find((symbol) => symbol.description === "kHandle");
  if (key === undefined) return undefined;
  const handle = (session as Record<symbol, unknown>)[key] as Partial<SessionHandle> | undefined;
  return typeof handle?.getOutgoingChunk === "function" ? handle as SessionHandle : undefined;
}

/** The socket a session writes to, with `cork` and `uncork`; undefined when the shape differs. */
function socketOf(session: { readonly socket?: unknown }): CorkableSocket | undefined {
  let socket: Partial<CorkableSocket> | undefined;
  try {
    socket = session.socket as Partial<CorkableSocket> | undefined;
  } catch {
    return undefined;
  }
  if (typeof socket?.cork !== "function" || typeof socket.uncork !== "function") return undefined;
  // The session's socket is a proxy that binds a method at every read: bound once here.
  return { cork: socket.cork, uncork: socket.uncork };
}

/**
 * Makes `session` write each drain of its frames to its socket as one write; returns false, and changes
 * nothing, when the session is not shaped as this runtime's (each frame is then written alone, as before).
 */
export function batchSessionWrites(session: object): boolean {
  const handle = handleOf(session);
  const socket = socketOf(session as { socket?: unknown });
  if (handle === undefined || socket === undefined) return false;
  const next = handle.getOutgoingChunk.bind(handle);
  let corked = false;
  const uncork = () => {
    if (!corked) return;
    corked = false;
    socket.uncork();
  };
  handle.getOutgoingChunk = () => {
    const chunk = next();
    if (chunk === undefined || chunk === null || chunk.byteLength === 0) {
      uncork();
      return chunk;
    }
    if (!corked) {
      corked = true;
      socket.cork();
      queueMicrotask(uncork);
    }
    return chunk;
  };
  return true;
}

/** Batches the frame writes of every session `http2Server` (a `node:http2` server) accepts. */
export function batchHttp2ServerWrites(http2Server: EventEmitter): void {
  http2Server.on("session", (session: object) => void batchSessionWrites(session));
}
