/**
 * A TCP connection through `node:net`, read and written as the guard's relay reads and writes a `Deno.Conn`.
 * Its reason to exist: on Deno 2.9.3 `Deno.Conn.close()` leaves a socket with a write in progress open until the
 * write completes, and a server that reads nothing never lets it complete; `node:net`'s `destroy()` closes the
 * socket at once and fails the write. The guard's connections to its own loopback server go through this, so a
 * client that leaves never leaves one of them stuck.
 *
 * @module
 */
import net from "node:net";

/** Bytes read and not yet taken before reading from the socket pauses. */
const READ_AHEAD_BYTES = 64 * 1024;

/** The part of `Deno.Conn` the guard's relay uses, over a `node:net` socket. */
export class NodeSocketConn {
  readonly #socket: net.Socket;
  readonly #chunks: Uint8Array[] = [];
  #queued = 0;
  #ended = false;
  #error?: Error;
  #wake?: () => void;

  private constructor(
    socket: net.Socket,
    readonly localAddr: Deno.NetAddr,
    readonly remoteAddr: Deno.NetAddr,
  ) {
    this.#socket = socket;
    socket.on("data", (chunk: Uint8Array) => {
      this.#chunks.push(chunk);
      this.#queued += chunk.length;
      if (this.#queued >= READ_AHEAD_BYTES) socket.pause();
      this.#wakeReader();
    });
    socket.on("end", () => {
      this.#ended = true;
      this.#wakeReader();
    });
    socket.on("error", (error: Error) => {
      this.#error = error;
      this.#wakeReader();
    });
    socket.on("close", () => {
      this.#ended = true;
      this.#wakeReader();
    });
  }

  /** Reads and writes `socket`, an open `node:net` socket or a subclass of it (a TLS socket). */
  static over(socket: net.Socket, localAddr: Deno.NetAddr, remoteAddr: Deno.NetAddr): NodeSocketConn {
    return new NodeSocketConn(socket, localAddr, remoteAddr);
  }

  /**
   * Connects to `hostname:port`.
   *
   * @throws {Error} when the connection cannot be made
   */
  static connect(target: { hostname: string; port: number }): Promise<NodeSocketConn> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: target.hostname, port: target.port });
      socket.once("error", reject);
      socket.once("connect", () => {
        socket.off("error", reject);
        const address = (host: string | undefined, port: number | undefined): Deno.NetAddr => ({
          transport: "tcp",
          hostname: host ?? target.hostname,
          port: port ?? 0,
        });
        resolve(
          new NodeSocketConn(
            socket,
            address(socket.localAddress, socket.localPort),
            address(socket.remoteAddress, socket.remotePort),
          ),
        );
      });
    });
  }

  /**
   * Reads into `buffer`; the number of bytes read, or null at the end of the stream.
   *
   * @throws {Error} the socket's error, or when it was closed while reading
   */
  async read(buffer: Uint8Array): Promise<number | null> {
    while (this.#chunks.length === 0) {
      if (this.#error !== undefined) throw this.#error;
      if (this.#ended) return null;
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
    let n = 0;
    while (n < buffer.length && this.#chunks.length > 0) {
      const chunk = this.#chunks[0];
      const take = Math.min(chunk.length, buffer.length - n);
      buffer.set(chunk.subarray(0, take), n);
      n += take;
      if (take === chunk.length) this.#chunks.shift();
      else this.#chunks[0] = chunk.subarray(take);
    }
    this.#queued -= n;
    if (this.#queued < READ_AHEAD_BYTES && this.#socket.isPaused()) this.#socket.resume();
    return n;
  }

  /**
   * Writes all of `bytes`; resolves with their length once the socket has taken them.
   *
   * @throws {Error} when the socket fails or is closed first
   */
  write(bytes: Uint8Array): Promise<number> {
    return new Promise((resolve, reject) => {
      // node:net may keep the buffer until it is written: hand it a copy of a view into the caller's buffer.
      this.#socket.write(bytes.slice(), (error) => error ? reject(error) : resolve(bytes.length));
    });
  }

  /** Ends the writing side (a FIN, or over TLS a close_notify first); reading goes on. */
  closeWrite(): Promise<void> {
    // end() never runs its callback on a socket already destroyed, nor on one destroyed before its end is
    // written: settle at the close as well, so that nothing waits on it for good.
    if (this.#socket.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      this.#socket.end(resolve);
      this.#socket.once("close", () => resolve());
    });
  }

  /** Closes the socket at once, a write in progress or not; that write fails. */
  close(): void {
    this.#socket.destroy();
    this.#ended = true;
    this.#wakeReader();
  }

  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
