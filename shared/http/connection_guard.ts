import type { Logger } from "../log/logger.ts";
import type { ListenAddress } from "./listen_address.ts";

/** Time and size bounds on each connection of an HTTP listener. */
export interface ConnectionLimits {
  /** A TLS handshake must complete within this (default 10 s). */
  readonly handshakeTimeoutMs: number;
  /** The first request's header block must arrive within this after the connection opens (default 10 s). */
  readonly headerTimeoutMs: number;
  /** A connection with no byte in either direction for this long is closed (default 60 s). */
  readonly idleTimeoutMs: number;
  /**
   * Over TLS, where headers cannot be read: once the client sends bytes after the handshake, the server must
   * send something back within this (default 30 s: the header time, the 10 s body limit, and slack), or the
   * connection is closed. A request trickled byte by byte never gets an answer, so it is cut here.
   */
  readonly answerTimeoutMs: number;
  /** Largest header block accepted; a larger one is answered 431 (default 64 KiB). */
  readonly maxHeaderBytes: number;
  /** Connections open at once; more are closed on accept (default 1024). */
  readonly maxConnections: number;
}

/** Defaults: generous for the API server, monitoring scrapers and operators; finite for everyone else. */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = Object.freeze({
  handshakeTimeoutMs: 10_000,
  headerTimeoutMs: 10_000,
  idleTimeoutMs: 60_000,
  answerTimeoutMs: 30_000,
  maxHeaderBytes: 64 * 1024,
  maxConnections: 1024,
});

/** Options of {@link startConnectionGuard}. */
export interface ConnectionGuardOptions {
  /** Where clients connect. */
  readonly listen: ListenAddress;
  /** The loopback HTTP server that handles what passes. */
  readonly backend: Deno.NetAddr;
  /**
   * True when the backend terminates TLS: bytes are relayed unread, the handshake (until the client answers
   * the server's first flight) must finish within `handshakeTimeoutMs`, then `idleTimeoutMs` and
   * `answerTimeoutMs` apply. TLS is not terminated here because a TLS connection closed mid-handshake in Deno
   * keeps its socket open.
   */
  readonly tls?: boolean;
  readonly limits: ConnectionLimits;
  readonly log: Logger;
  /** Name of the server, for log lines. */
  readonly name: string;
}

/** A running guard: its bound address, the client behind a backend connection, and how to stop it. */
export interface ConnectionGuard {
  readonly address: Deno.NetAddr;
  /** The client whose connection the guard relays from local port `port` to the backend. */
  peerOf(port: number): Deno.NetAddr | undefined;
  close(): Promise<void>;
}

const HEADER_END = new Uint8Array([13, 10, 13, 10]);

/**
 * Accepts connections in front of an HTTP server that has no connection timeouts of its own (`Deno.serve`):
 * a TLS handshake, the first request's headers, and every quiet period are bounded in time, the header block
 * in size, and the number of connections; what passes is relayed to the server on loopback. A slow or silent
 * peer loses only its own connection.
 */
export function startConnectionGuard(options: ConnectionGuardOptions): ConnectionGuard {
  const { limits, log, name } = options;
  const listener = Deno.listen(options.listen);
  const open = new Set<Deno.Conn>();
  const peers = new Map<number, Deno.NetAddr>();
  const tasks = new Set<Promise<void>>();
  let refusedLogged = false;

  const accepting = (async () => {
    for await (const conn of listener) {
      if (open.size >= limits.maxConnections) {
        if (!refusedLogged) {
          log.warn(`${name}: ${limits.maxConnections} connections open; refusing more until some close`);
          refusedLogged = true;
        }
        conn.close();
        continue;
      }
      refusedLogged = false;
      open.add(conn);
      const task = serveConnection(conn).catch(() => {}).finally(() => {
        open.delete(conn);
        tasks.delete(task);
      });
      tasks.add(task);
    }
  })().catch(() => {});

  async function serveConnection(conn: Deno.Conn): Promise<void> {
    let backend: Deno.TcpConn | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const closeAll = () => {
      clearTimeout(timer);
      safeClose(conn);
      if (backend) safeClose(backend);
    };
    const arm = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(closeAll, ms);
    };
    try {
      if (options.tls) {
        arm(limits.handshakeTimeoutMs);
        backend = await Deno.connect({ hostname: options.backend.hostname, port: options.backend.port });
        const local = backend.localAddr as Deno.NetAddr;
        peers.set(local.port, conn.remoteAddr as Deno.NetAddr);
        // One deadline for the handshake, not renewed by a trickle; quiet periods are bounded after it, and so is
        // the wait for an answer: client bytes start the answer clock (later ones do not restart it), any server
        // byte stops it. The client's last handshake flight does not start it, so an idle pooled connection
        // waits for its first request under the idle timeout alone.
        let serverSpoke = false;
        let open = false;
        let answerTimer: ReturnType<typeof setTimeout> | undefined;
        try {
          await Promise.race([
            relay(conn, backend, () => {
              if (!open) {
                open = serverSpoke;
              } else if (answerTimer === undefined) {
                answerTimer = setTimeout(closeAll, limits.answerTimeoutMs);
              }
              if (open) arm(limits.idleTimeoutMs);
            }),
            relay(backend, conn, () => {
              serverSpoke = true;
              clearTimeout(answerTimer);
              answerTimer = undefined;
              if (open) arm(limits.idleTimeoutMs);
            }),
          ]);
        } finally {
          clearTimeout(answerTimer);
          peers.delete(local.port);
        }
        return;
      }
      arm(limits.headerTimeoutMs);
      const head = await readHeaderBlock(conn, limits.maxHeaderBytes);
      if (head === "too-large") {
        await conn.write(new TextEncoder().encode(
          "HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
        ));
        return;
      }
      if (head === undefined) return;
      backend = await Deno.connect({ hostname: options.backend.hostname, port: options.backend.port });
      const local = backend.localAddr as Deno.NetAddr;
      peers.set(local.port, conn.remoteAddr as Deno.NetAddr);
      try {
        arm(limits.idleTimeoutMs);
        await writeAll(backend, head);
        const activity = () => arm(limits.idleTimeoutMs);
        await Promise.race([relay(conn, backend, activity), relay(backend, conn, activity)]);
      } finally {
        peers.delete(local.port);
      }
    } finally {
      closeAll();
    }
  }

  return {
    get address() {
      return listener.addr as Deno.NetAddr;
    },
    peerOf: (port) => peers.get(port),
    async close() {
      safeClose(listener);
      for (const conn of open) safeClose(conn);
      await accepting;
      await Promise.all(tasks);
    },
  };
}

/** Reads until the end of the header block; the bytes read, `too-large`, or undefined when the peer left. */
async function readHeaderBlock(
  conn: Deno.Conn,
  maxBytes: number,
): Promise<Uint8Array | "too-large" | undefined> {
  let buffer = new Uint8Array(0);
  const chunk = new Uint8Array(16 * 1024);
  while (true) {
    const n = await conn.read(chunk);
    if (n === null) return undefined;
    const next = new Uint8Array(buffer.length + n);
    next.set(buffer);
    next.set(chunk.subarray(0, n), buffer.length);
    buffer = next;
    if (indexOf(buffer, HEADER_END, Math.max(0, buffer.length - n - 3)) >= 0) return buffer;
    if (buffer.length > maxBytes) return "too-large";
  }
}

async function relay(from: Deno.Conn, to: Deno.Conn, activity: () => void): Promise<void> {
  const chunk = new Uint8Array(64 * 1024);
  while (true) {
    const n = await from.read(chunk);
    if (n === null) return;
    activity();
    await writeAll(to, chunk.subarray(0, n));
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  outer: for (let i = from; i <= haystack.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function safeClose(closer: { close(): void }): void {
  try {
    closer.close();
  } catch {
    // already closed
  }
}
