/**
 * One client's TCP connection to the DNS proxy: its queries read one at a time from the stream and answered in
 * turn, as miekg/dns serves them, within two bounds a client cannot stretch:
 *
 * - a deadline for each query: once no reply is owed, the next query must come whole within the idle time,
 *   however its bytes trickle in (miekg/dns also reads a whole message within one deadline), so a client
 *   sending a byte every few seconds cannot hold one of the proxy's connections for good;
 * - replies the client has not read: past the socket's high-water mark no further query is read until they
 *   drain, so a client that sends queries and never reads makes the proxy hold what its socket buffers, not
 *   a reply for every query it sent.
 *
 * @module
 */
import type { Timers } from "@mesh/shared/time/timers";
import { tcpFrame, TcpFrameReader } from "./tcp_frames.ts";

/** What the connection needs of its socket; a `node:net` Socket. */
export interface DnsTcpSocket {
  /** Whether the socket was destroyed. */
  readonly destroyed: boolean;
  /** Whether what was written is past the high-water mark, until `drain`. */
  readonly writableNeedDrain: boolean;
  /** Listens for the socket's events. */
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  /** Listens for the socket's events. */
  on(event: "close" | "drain" | "error", listener: () => void): unknown;
  /** Queues bytes to the client. */
  write(bytes: Uint8Array): unknown;
  /** Stops `data` events. */
  pause(): unknown;
  /** Restarts `data` events. */
  resume(): unknown;
  /** Closes the connection. */
  destroy(): unknown;
}

/** The reply to a query, or undefined when it is dropped; never rejects. */
export type DnsAnswer = (query: Uint8Array) => Uint8Array | undefined | Promise<Uint8Array | undefined>;

/**
 * Serves `socket` until it closes: each query to `answer`, each reply written back as it comes. The connection
 * is closed when a query is not whole `idleMs` after the last reply owed (or the connection's start).
 */
export function serveDnsTcpConnection(
  socket: DnsTcpSocket,
  answer: DnsAnswer,
  idleMs: number,
  timers: Timers,
): void {
  const frames = new TcpFrameReader();
  let owed = 0;
  let deadline: unknown;
  let waitingForDrain = false;
  const startDeadline = () => {
    timers.clearTimeout(deadline);
    deadline = timers.setTimeout(() => socket.destroy(), idleMs);
  };
  const replied = (reply: Uint8Array | undefined) => {
    if (socket.destroyed) return;
    if (reply !== undefined) socket.write(tcpFrame(reply));
    if (--owed === 0) startDeadline();
  };
  const readQueries = () => {
    for (;;) {
      if (socket.destroyed || waitingForDrain) return;
      if (socket.writableNeedDrain) {
        waitingForDrain = true;
        socket.pause();
        return;
      }
      const query = frames.next();
      if (query === undefined) return;
      timers.clearTimeout(deadline);
      owed++;
      const reply = answer(query);
      if (reply instanceof Promise) void reply.then(replied);
      else replied(reply);
    }
  };
  socket.on("data", (chunk) => {
    frames.append(chunk);
    readQueries();
  });
  socket.on("drain", () => {
    if (!waitingForDrain) return;
    waitingForDrain = false;
    socket.resume();
    readQueries();
  });
  socket.on("error", () => socket.destroy());
  socket.on("close", () => timers.clearTimeout(deadline));
  startDeadline();
}
