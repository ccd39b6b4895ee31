/**
 * Keeps a `node:net` server accepting after the process ran out of file descriptors.
 *
 * Deno 2.9.3's `node:net` listener (libs/core/uv_compat/tcp.rs, `poll_tcp_handle`) drains its accept queue while
 * tokio's `poll_accept` is ready with a connection; an error such as EMFILE ends the loop silently, with no
 * waker registered and the listener's readiness still set, so the listener is never polled again: connections
 * pile up in the kernel's queue for good, though descriptors free up. Listening again on the same handle is a
 * no-op besides marking it ready, which retries the accept.
 *
 * @module
 */
import type net from "node:net";

/** How often a listener is re-armed: the retry period of an accept that failed for want of descriptors. */
export const ACCEPT_REARM_MS = 1_000;

interface ListenHandle {
  listen?(backlog: number): number;
}

/**
 * Re-arms `server`'s accept every `periodMs` while it listens (a no-op on a listener that is accepting). Returns
 * the function that stops it.
 */
export function keepAccepting(server: net.Server, backlog: number, periodMs = ACCEPT_REARM_MS): () => void {
  const timer = setInterval(() => {
    const handle = (server as unknown as { _handle?: ListenHandle | null })._handle;
    handle?.listen?.(backlog);
  }, periodMs);
  Deno.unrefTimer(timer);
  return () => clearInterval(timer);
}
