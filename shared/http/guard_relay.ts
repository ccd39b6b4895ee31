/**
 * The byte relay between a guarded client connection and the loopback server behind it, and the one fact of
 * the runtime it is built around: on Deno 2.9.3 `Deno.Conn.close()` does not close a socket with a write in
 * progress. The write (to a peer that reads nothing: a full send buffer) holds the socket open until it
 * completes, so a connection "closed" while its peer never reads keeps its descriptor and its kernel buffers
 * for as long as the peer likes. Reads in progress are cancelled by `close()`, writes are not.
 *
 * So writes to a client are counted ({@link PendingWrites}): the guard keeps a client's slot until they are
 * done. The connection to the server goes through `node:net` (`node_socket_conn.ts`), whose close ends a
 * socket at once: the server does not read while its answers go unread, and the two were stuck for good.
 *
 * @module
 */

/** What the relay reads and writes: a `Deno.Conn`, or the `node:net` connection to the server. */
export interface RelayConn {
  read(buffer: Uint8Array): Promise<number | null>;
  write(bytes: Uint8Array): Promise<number>;
  closeWrite(): Promise<void>;
  close(): void;
}

/** Counts one connection's writes in progress, and says when none is. */
export class PendingWrites {
  #pending = 0;
  #idle?: PromiseWithResolvers<void>;

  /** True when no write is in progress. */
  get idle(): boolean {
    return this.#pending === 0;
  }

  /** Resolves once no write is in progress (at once when none is). */
  whenIdle(): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    this.#idle ??= Promise.withResolvers<void>();
    return this.#idle.promise;
  }

  /**
   * Writes all of `bytes` to `conn`, counted until the last write settles.
   *
   * @throws whatever the connection's write throws (closed, reset)
   */
  async writeAll(conn: RelayConn, bytes: Uint8Array): Promise<void> {
    this.#pending++;
    try {
      await writeAll(conn, bytes);
    } finally {
      if (--this.#pending === 0) {
        this.#idle?.resolve();
        this.#idle = undefined;
      }
    }
  }
}

/**
 * Writes all of `bytes` to `conn`.
 *
 * @throws whatever the connection's write throws (closed, reset)
 */
export async function writeAll(conn: RelayConn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

/** One side of a relayed connection: the socket, and its writes in progress when they are counted. */
export interface RelaySide {
  readonly conn: RelayConn;
  readonly writes?: PendingWrites;
}

/** Handlers of the bytes relayed each way. */
export interface RelayEvents {
  /** Bytes from the client, once written to the server. */
  client(bytes: Uint8Array): void;
  /** Bytes from the server, once written to the client. */
  server(bytes: Uint8Array): void;
  /** The client half-closed; the server's side keeps being relayed. */
  clientEnded?(): void;
  /**
   * The server ended its side and all of it was relayed: what to wait for before the connection is closed
   * (ending the client's side in turn), or undefined to close at once.
   */
  serverEnded?(): Promise<void> | undefined;
  /**
   * Called before the client's bytes are passed on: a promise to wait for first (the guard holds a client's
   * next request until its last is answered), or undefined to go on at once.
   */
  beforeClientPart?(): Promise<void> | undefined;
  /**
   * How many of the client's `bytes` to pass on now (at least one); the rest is offered again, after
   * {@link beforeClientPart}, before anything more is read. All of them when absent.
   */
  clientPart?(bytes: Uint8Array): number;
}

/**
 * Relays both ways until the server's side ends or either fails, then closes through `closeAll`. The client's
 * end of input is not passed on: the HTTP server closes a connection whose client half-closed, which would lose
 * the answer still due. `held`: client bytes already read and not yet passed on.
 */
export async function relayBoth(
  client: RelaySide,
  server: RelaySide,
  closeAll: () => void,
  events: RelayEvents,
  held: Uint8Array = new Uint8Array(0),
): Promise<void> {
  const up = relay(client.conn, server, (bytes) => events.client(bytes), {
    held,
    ...(events.beforeClientPart && { beforePart: events.beforeClientPart }),
    ...(events.clientPart && { part: events.clientPart }),
  }).then(
    () => events.clientEnded?.(),
    closeAll,
  );
  const serverEnded = await relay(server.conn, client, (bytes) => events.server(bytes)).then(
    () => true,
    () => false,
  );
  if (serverEnded) await events.serverEnded?.();
  closeAll();
  await up;
}

/** How {@link relay} paces what it passes on. */
interface Pacing {
  /** Bytes read before the relay started, passed on first. */
  readonly held?: Uint8Array;
  /** Waited for before bytes are passed on. */
  readonly beforePart?: () => Promise<void> | undefined;
  /** How many of the bytes at hand to pass on now. */
  readonly part?: (bytes: Uint8Array) => number;
}

/**
 * Copies `from` to `to` until `from` ends; `relayed` sees each part once it has been written. Nothing more is
 * read while bytes already read wait to be passed on.
 */
async function relay(
  from: RelayConn,
  to: RelaySide,
  relayed: (bytes: Uint8Array) => void,
  pacing: Pacing = {},
): Promise<void> {
  const chunk = new Uint8Array(64 * 1024);
  let held = pacing.held ?? new Uint8Array(0);
  while (true) {
    // One chunk is read ahead while the pacing holds it back: a client that leaves is noticed meanwhile (a
    // handler waiting for it is let go), and nothing more than that chunk is kept.
    if (held.length === 0) {
      const n = await from.read(chunk);
      if (n === null) return;
      held = chunk.subarray(0, n);
    }
    const wait = pacing.beforePart?.();
    if (wait !== undefined) await wait;
    const take = pacing.part === undefined
      ? held.length
      : Math.max(1, Math.min(held.length, pacing.part(held)));
    const passed = held.subarray(0, take);
    held = held.subarray(take);
    await (to.writes === undefined ? writeAll(to.conn, passed) : to.writes.writeAll(to.conn, passed));
    relayed(passed);
  }
}
