import type { Logger } from "../log/logger.ts";
import { Http1Framer } from "./http1_framer.ts";
import type { ListenAddress } from "./listen_address.ts";
import { type ConnectionSlot, ConnectionSlots, type SlotRefusal, type SlotWait } from "./connection_slots.ts";
import { SlotWaiters } from "./slot_waiters.ts";
import { PeerLogLimiter } from "../log/peer_log_limiter.ts";
import { PendingWrites, relayBoth, type RelayConn, writeAll } from "./guard_relay.ts";
import { NodeSocketConn } from "./node_socket_conn.ts";
import { type TlsHandshake, type TlsKeyPair, TlsTerminator } from "./tls_termination.ts";

/** A connection to the guard's backend: the relay's reads and writes, and its local address. */
export type BackendConn = RelayConn & { readonly localAddr: Deno.Addr };
import { systemTimers, type Timers } from "../time/timers.ts";

/** Time and size bounds on each connection of an HTTP listener. */
export interface ConnectionLimits {
  /** A TLS handshake must complete within this (default 10 s). */
  readonly handshakeTimeoutMs: number;
  /**
   * Each plain HTTP/1.1 request's header block must arrive within this (default 10 s): the first from the
   * connection opening, every later one from its first byte, so a keep-alive connection cannot trickle them.
   */
  readonly headerTimeoutMs: number;
  /** A connection with no byte in either direction for this long is closed (default 60 s). */
  readonly idleTimeoutMs: number;
  /**
   * Where requests cannot be framed (HTTP/2, upgraded connections): once the client sends bytes, the server must
   * send something back within this (default 30 s: the header time, the 10 s body limit, and slack), or the
   * connection is closed. A request trickled byte by byte never gets an answer, so it is cut here.
   */
  readonly answerTimeoutMs: number;
  /** Largest header block accepted; a larger first one is answered 431 (default 64 KiB). */
  readonly maxHeaderBytes: number;
  /** Connections open at once (default 1024); see {@link startConnectionGuard} for what happens past it. */
  readonly maxConnections: number;
  /** Connections open at once from one client address (default 64). */
  readonly maxConnectionsPerPeer: number;
}

/** Defaults: generous for the API server, monitoring scrapers and operators; finite for everyone else. */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = Object.freeze({
  handshakeTimeoutMs: 10_000,
  headerTimeoutMs: 10_000,
  idleTimeoutMs: 60_000,
  answerTimeoutMs: 30_000,
  maxHeaderBytes: 64 * 1024,
  maxConnections: 1024,
  maxConnectionsPerPeer: 64,
});

/** Why the guard closed a connection on accept, or closed an idle one to make room. */
export type ConnectionRefusal = "connections" | "peer_connections" | "evicted";

/** Options of {@link startConnectionGuard}. */
export interface ConnectionGuardOptions {
  /** Where clients connect. */
  readonly listen: ListenAddress;
  /** The loopback HTTP server that handles what passes. */
  readonly backend: Deno.NetAddr;
  /**
   * When set, clients speak TLS with this certificate: the guard ends it (the handshake must finish within
   * `handshakeTimeoutMs`) and relays what it decrypts to the plain backend, bounded as plain connections are.
   */
  readonly tls?: TlsKeyPair;
  readonly limits: ConnectionLimits;
  readonly log: Logger;
  /** Name of the server, for log lines. */
  readonly name: string;
  /** Called for each connection refused or evicted, with the client's address. */
  readonly onRefused?: (reason: ConnectionRefusal, peer: string) => void;
  /** Decides which refusals are logged (default: once per peer per minute). */
  readonly logThrottle?: PeerLogLimiter;
  /** Times the connection bounds and the accept back-off; default the runtime's. */
  readonly timers?: Timers;
  /** Opens a connection to the backend; default `Deno.connect`. */
  readonly dial?: (backend: { hostname: string; port: number }) => Promise<BackendConn>;
}

/** A running guard: its bound address, the client behind a backend connection, and how to stop it. */
export interface ConnectionGuard {
  readonly address: Deno.NetAddr;
  /** Connections waiting for a slot, their scope full of connections with a request in progress. */
  readonly waiting: number;
  /** Connections being served, closed ones whose last write has not finished among them. */
  readonly serving: number;
  /** The client whose connection the guard relays from local port `port` to the backend. */
  peerOf(port: number): Deno.NetAddr | undefined;
  /**
   * Serves `pair` to TLS handshakes from now on.
   *
   * @throws {TypeError} when the guard does not end TLS; {Error} when the pair cannot be used (the old one stays)
   */
  updateTls(pair: TlsKeyPair): void;
  close(): Promise<void>;
}

/**
 * After a plain HTTP client's end of input, how long the server may go without sending before the client is
 * taken to have left (its handlers are then cancelled) rather than to be waiting for its answer.
 */
const HALF_CLOSE_GRACE_MS = 1_000;
/**
 * How long closing the guard waits for its connections to end. One whose client reads nothing can wait on a
 * write no close ends (guard_relay.ts); the process exits without it.
 */
const CLOSE_GRACE_MS = 5_000;
/**
 * Waits between accept attempts while descriptors are out. A probe queued meanwhile waits for the next attempt,
 * so the longest wait is short beside `/ready`'s 1 s budget; an attempt that fails costs one system call.
 */
const ACCEPT_BACKOFF_MIN_MS = 10;
const ACCEPT_BACKOFF_MAX_MS = 250;

/**
 * Accepts connections in front of an HTTP server that has no connection timeouts of its own (`Deno.serve`):
 * a TLS handshake, each request's headers, and every quiet period are bounded in time, the header block in
 * size, and the number of connections in all and per client address; what passes is relayed to the server on
 * loopback. When a bound on the number is reached, the connection that has waited longest without a request
 * in progress (idle between requests, or still sending its handshake or headers) in the same scope is closed
 * to make room, answered ones first, never one accepted since the accept loop last yielded; when every one
 * has a request in progress the newcomer waits its turn, up to the header time. So a peer flooding slots
 * cannot keep out a probe, and a slow or silent peer loses only its own connections. Accepting survives
 * running out of file descriptors: it backs off and retries.
 */
export function startConnectionGuard(options: ConnectionGuardOptions): ConnectionGuard {
  const { limits, log, name } = options;
  const timers = options.timers ?? systemTimers;
  const dial = options.dial ?? ((backend) => NodeSocketConn.connect(backend));
  const terminator = options.tls === undefined ? undefined : new TlsTerminator(options.tls);
  const listener = Deno.listen(options.listen);
  const peers = new Map<number, Deno.NetAddr>();
  const tasks = new Set<Promise<void>>();
  const throttle = options.logThrottle ?? new PeerLogLimiter();
  const stopped = Promise.withResolvers<void>();
  let closing = false;

  const refused = (reason: ConnectionRefusal, peer: string) => {
    options.onRefused?.(reason, peer);
    const passedOver = throttle.take(peer);
    if (passedOver === undefined) return;
    const why = {
      connections: `${limits.maxConnections} connections open, all with a request in progress; refused one`,
      peer_connections:
        `${limits.maxConnectionsPerPeer} connections open from one address, all with a request in progress; refused one`,
      evicted: "connection limit reached; closed the connection idle the longest to make room",
    }[reason];
    log.warn(`${name}: ${why}`, { peer, reason, passedOver });
  };

  let offering = false;
  const offerRoom = () => {
    if (offering) return;
    offering = true;
    queueMicrotask(() => {
      offering = false;
      waiters.offer();
    });
  };
  const slots = new ConnectionSlots(limits, (peer) => refused("evicted", peer), offerRoom);
  const waiters = new SlotWaiters(limits.maxConnections, limits.headerTimeoutMs, timers);
  let roundDue = false;
  const nextRound = () => {
    if (roundDue) return;
    roundDue = true;
    nextTurn().then(() => {
      roundDue = false;
      slots.newRound();
      waiters.offer();
    });
  };

  /**
   * Gives `conn` a slot and serves it; the bound in the way, or "wait", when there is no room yet. A slot is
   * given back only once the writes to its client are done: the runtime keeps a socket with a write in
   * progress open through `close()`, so a client that reads nothing would otherwise hold descriptors past
   * every bound.
   */
  const place = (conn: Deno.Conn, peer: string): SlotRefusal | SlotWait | undefined => {
    const writes = new PendingWrites();
    // Closing the slot (to make room, or the guard closing) ends the whole connection, its relay included.
    let end = () => safeClose(conn);
    const slot = slots.claim(peer, () => {
      end();
      return writes.idle ? undefined : writes.whenIdle();
    });
    if (typeof slot === "string") return slot;
    const task = serveConnection({ conn, writes }, slot, (closeAll) => end = closeAll).catch(() => {})
      .finally(() => {
        slot.close();
        tasks.delete(task);
      });
    tasks.add(task);
  };

  const admit = async (conn: Deno.Conn) => {
    const peer = (conn.remoteAddr as Deno.NetAddr).hostname;
    let result = place(conn, peer);
    // Accepting is eager: a burst of queued connections is taken without a read in between. Room is made only
    // from connections that have had a turn of the event loop to be read (a probe's request then marks it
    // busy), so the accept loop yields one before closing any taken since its last yield.
    while (result === "wait" && !closing) {
      await nextTurn();
      slots.newRound();
      result = place(conn, peer);
    }
    if (result === undefined) return;
    if (result === "wait") return safeClose(conn);
    const refusal = result;
    const refuse = () => {
      if (!closing) refused(refusal, peer);
      safeClose(conn);
    };
    // Every connection in scope has a request in progress: wait for one to end or go idle, in turn.
    const placed = () => {
      const outcome = place(conn, peer);
      if (outcome === "wait") nextRound();
      return outcome === undefined;
    };
    if (!waiters.wait(peer, placed, refuse)) refuse();
  };

  const accepting = (async () => {
    let backoffMs = 0;
    while (!closing) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch (error) {
        if (closing || error instanceof Deno.errors.BadResource) return;
        // Out of file descriptors (EMFILE/ENFILE) or another transient failure: the pending connections stay
        // queued, so wait for descriptors to free up and try again rather than stop accepting for good.
        if (backoffMs === 0) {
          log.warn(`${name}: cannot accept connections; retrying`, { error: (error as Error).message });
        }
        backoffMs = Math.min(Math.max(backoffMs * 2, ACCEPT_BACKOFF_MIN_MS), ACCEPT_BACKOFF_MAX_MS);
        let timer: unknown;
        await Promise.race([
          new Promise<void>((resolve) => timer = timers.setTimeout(resolve, backoffMs)),
          stopped.promise,
        ]);
        timers.clearTimeout(timer);
        continue;
      }
      if (backoffMs > 0) log.info(`${name}: accepting connections again`);
      backoffMs = 0;
      await admit(conn);
    }
  })();

  async function serveConnection(
    client: { readonly conn: Deno.Conn; readonly writes: PendingWrites },
    slot: ConnectionSlot,
    onEnd: (closeAll: () => void) => void,
  ): Promise<void> {
    const raw = client.conn;
    // What requests are read from and answers written to: the client's socket, or the TLS session over it.
    let conn: RelayConn = raw;
    let handshake: TlsHandshake | undefined;
    let backend: BackendConn | undefined;
    let timer: unknown;
    let headerTimer: unknown;
    let answerTimer: unknown;
    let leftTimer: unknown;
    let closed = false;
    let resumeReading: (() => void) | undefined;
    const closeAll = () => {
      if (closed) return;
      closed = true;
      timers.clearTimeout(timer);
      timers.clearTimeout(leftTimer);
      timers.clearTimeout(headerTimer);
      timers.clearTimeout(answerTimer);
      safeClose(raw);
      handshake?.destroy();
      slot.close();
      resumeReading?.();
      if (backend) safeClose(backend);
    };
    onEnd(closeAll);
    const arm = (ms: number) => {
      timers.clearTimeout(timer);
      if (!closed) timer = timers.setTimeout(closeAll, ms);
    };
    const evictable = (yes: boolean) => slot.evictable(yes);
    const connectBackend = async () => {
      backend = await dial({ hostname: options.backend.hostname, port: options.backend.port });
      // closeAll closes the backend connection only if it exists when it runs, and runs once: a connection
      // closed while this one opened (its idle timer, the guard closing) must not go on to relay, or nothing
      // ever closes the backend's side and the task never ends.
      if (closed) {
        safeClose(backend);
        throw new Error("the connection was closed while its backend connection opened");
      }
      peers.set((backend.localAddr as Deno.NetAddr).port, raw.remoteAddr as Deno.NetAddr);
      return backend;
    };
    // Without framing (bytes that are not HTTP/1.1 messages: HTTP/2, upgrades): client bytes start the answer
    // clock (later ones do not restart it), any server byte stops it; a connection waiting for an answer is
    // not evictable.
    const answerClock = {
      client: () => {
        if (answerTimer !== undefined) return;
        answerTimer = timers.setTimeout(closeAll, limits.answerTimeoutMs);
        evictable(false);
      },
      server: () => {
        if (answerTimer !== undefined) slot.served();
        timers.clearTimeout(answerTimer);
        answerTimer = undefined;
        evictable(true);
      },
    };
    try {
      if (terminator !== undefined) {
        // One deadline for the handshake, not renewed by a trickle; the first request's header time starts after.
        arm(limits.handshakeTimeoutMs);
        handshake = terminator.accept(raw, client.writes);
        conn = await handshake.secured;
      }
      const methods: string[] = [];
      const requests = new Http1Framer("request", limits.maxHeaderBytes, undefined, ({ start }) => {
        methods.push(start);
      });
      const responses = new Http1Framer("response", Number.MAX_SAFE_INTEGER, () => methods.shift());
      arm(limits.headerTimeoutMs);
      const first = await readFirstHead(conn, requests);
      if (first === undefined) return;
      if (requests.tooLarge) {
        await client.writes.writeAll(
          conn,
          new TextEncoder().encode(
            "HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
          ),
        );
        return;
      }
      // The client has sent its request and waits for the answer: from here the connection is busy, not idle,
      // so a flood from its address cannot close it while the backend connection opens, and the header time
      // it met no longer runs (a backend slow to accept would have it cut a request that arrived in time).
      evictable(false);
      arm(limits.idleTimeoutMs);
      const server = await connectBackend();
      const framed = () => !requests.opaque && !responses.opaque;
      // Framed: a request whose header block has begun must complete it within the header time; a connection
      // is evictable while every request it sent has been answered. A client that half-closes gets the
      // answers to what it sent, then the connection ends.
      let clientEnded = false;
      // A request is passed on only once the one before has been answered: a client pipelining requests it
      // never reads the answers to would otherwise have the server answer as many as the sockets' buffers hold
      // (megabytes of them, all of its event loop meanwhile), and leave the backend connection stuck writing.
      const waitingForAnswer = () => framed() && !closed && requests.completed > responses.completed;
      const beforeClientPart = () =>
        waitingForAnswer() ? new Promise<void>((resolve) => resumeReading = resolve) : undefined;
      const settle = () => {
        if (!framed()) return;
        if (requests.tooLarge) return closeAll();
        if (requests.inHead) {
          headerTimer ??= timers.setTimeout(closeAll, limits.headerTimeoutMs);
        } else {
          timers.clearTimeout(headerTimer);
          headerTimer = undefined;
        }
        const answered = responses.completed >= requests.heads;
        if (responses.completed > 0) slot.served();
        evictable(answered);
        if (clientEnded && answered) return closeAll();
        // A closed client cannot be told from a half-closed one: one whose answer does not keep coming is
        // taken to have left, and the server's handler is let go.
        if (clientEnded) {
          timers.clearTimeout(leftTimer);
          leftTimer = timers.setTimeout(closeAll, HALF_CLOSE_GRACE_MS);
        }
      };
      // The framer reads the client's bytes as they are passed on, one request at a time (clientPart).
      const onClient = () => {
        arm(limits.idleTimeoutMs);
        if (framed()) settle();
        else answerClock.client();
      };
      await writeAll(server, first.head);
      if (framed()) settle();
      else answerClock.client();
      await relayBoth(
        { conn, writes: client.writes },
        { conn: server },
        closeAll,
        {
          beforeClientPart,
          clientPart: (bytes) => framed() ? requests.feedMessage(bytes) : bytes.length,
          client: onClient,
          server: (bytes) => {
            arm(limits.idleTimeoutMs);
            if (framed()) responses.feed(bytes);
            if (framed()) settle();
            else answerClock.server();
            if (!waitingForAnswer()) {
              resumeReading?.();
              resumeReading = undefined;
            }
          },
          clientEnded: () => {
            clientEnded = true;
            if (framed()) settle();
            else server.closeWrite().catch(closeAll);
          },
          // The server closed its connection (an answer delimited by its end, `connection: close`): over TLS, end
          // the session with a close_notify before closing, or the client cannot tell that end from a truncation
          // (and a strict one fails). Writes to the client are done by then; a close_notify that stays unwritten
          // (a client that reads nothing) is ended by the idle timer, whose close settles the wait.
          serverEnded: () =>
            terminator === undefined || closed ? undefined : conn.closeWrite().catch(() => {}),
        },
        first.held,
      );
    } finally {
      if (backend) peers.delete((backend.localAddr as Deno.NetAddr).port);
      closeAll();
    }
  }

  return {
    get address() {
      return listener.addr as Deno.NetAddr;
    },
    get waiting() {
      return waiters.size;
    },
    get serving() {
      return tasks.size;
    },
    peerOf: (port) => peers.get(port),
    updateTls(pair) {
      if (terminator === undefined) throw new TypeError(`${name} does not serve TLS`);
      terminator.update(pair);
    },
    async close() {
      closing = true;
      stopped.resolve();
      safeClose(listener);
      waiters.closeAll();
      slots.closeAll();
      await accepting;
      let grace: unknown;
      const late = await Promise.race([
        Promise.all(tasks).then(() => false),
        new Promise<boolean>((resolve) => grace = timers.setTimeout(() => resolve(true), CLOSE_GRACE_MS)),
      ]);
      timers.clearTimeout(grace);
      if (late) {
        log.warn(`${name}: closed with connections whose clients read nothing still open`, {
          connections: tasks.size,
        });
      }
    },
  };
}

/**
 * Reads until the first request's header block is complete (or too large, or not HTTP/1.1), passing the bytes
 * through `framer`: the bytes up to the end of the first request (`head`) and what was read past it (`held`),
 * or undefined when the peer left first.
 */
async function readFirstHead(
  conn: RelayConn,
  framer: Http1Framer,
): Promise<{ head: Uint8Array; held: Uint8Array } | undefined> {
  let buffer = new Uint8Array(0);
  const chunk = new Uint8Array(16 * 1024);
  let held = new Uint8Array(0);
  while (framer.heads === 0 && !framer.opaque && !framer.tooLarge) {
    const n = await conn.read(chunk);
    if (n === null) return undefined;
    const passed = framer.feedMessage(chunk.subarray(0, n));
    const next = new Uint8Array(buffer.length + passed);
    next.set(buffer);
    next.set(chunk.subarray(0, passed), buffer.length);
    buffer = next;
    held = chunk.subarray(passed, n);
  }
  return { head: buffer, held };
}

/**
 * Resolves after the event loop has turned once, so that reads already due complete. A zero delay on the
 * runtime's timers rather than the injected ones: this orders work, it measures no time.
 */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function safeClose(closer: { close(): void }): void {
  try {
    closer.close();
  } catch {
    // already closed
  }
}
