/**
 * Ends TLS on a connection the guard accepted, so the guard reads its HTTP/1.1 requests as it reads a plain
 * connection's: their header deadlines and the one-request-at-a-time pacing then hold over TLS too. The
 * handshake runs in `node:tls` over the accepted `Deno.Conn` rather than in `Deno.listenTls`: the guard keeps
 * the socket, so a client that stops mid-handshake is closed at the handshake deadline like any other (a
 * `Deno.TlsConn` closed mid-handshake kept its socket open).
 *
 * @module
 */
import type net from "node:net";
import tls from "node:tls";
import { Duplex } from "node:stream";
import { NodeSocketConn } from "./node_socket_conn.ts";
import type { PendingWrites, RelayConn } from "./guard_relay.ts";

/** The accepted socket TLS runs over: a `Deno.Conn`, or anything that reads and writes as one. */
export type TlsTransport = RelayConn & { readonly localAddr: Deno.Addr; readonly remoteAddr: Deno.Addr };

/** PEM certificate chain (leaf first) and private key a TLS listener presents. */
export interface TlsKeyPair {
  readonly cert: string;
  readonly key: string;
}

/** Protocols offered in ALPN, in order of preference: what `Deno.serve` over TLS offers. */
const ALPN_PROTOCOLS = ["h2", "http/1.1"];

/** Bytes asked of the client's socket at a time while the TLS layer wants more. */
const READ_CHUNK_BYTES = 16 * 1024;

/** A handshake in progress: its outcome, and how to give it up. */
export interface TlsHandshake {
  /**
   * The decrypted connection once the handshake completes.
   *
   * @throws {Error} when the client fails the handshake, leaves, or the handshake is given up
   */
  readonly secured: Promise<NodeSocketConn>;
  /** Ends the TLS session and closes the client's socket; a handshake in progress then fails. */
  destroy(): void;
}

/** Ends TLS for one listener's connections with its certificate, which may be replaced while it runs. */
export class TlsTerminator {
  #context: tls.SecureContext;

  /**
   * Prepares the listener's certificate and key.
   *
   * @throws {Error} when the PEM cannot be read or the key does not match the certificate
   */
  constructor(pair: TlsKeyPair) {
    this.#context = tls.createSecureContext({ cert: pair.cert, key: pair.key });
  }

  /**
   * Serves `pair` to the handshakes that start from now on; sessions already established keep theirs.
   *
   * @throws {Error} when the PEM cannot be read or the key does not match the certificate (the old pair stays)
   */
  update(pair: TlsKeyPair): void {
    this.#context = tls.createSecureContext({ cert: pair.cert, key: pair.key });
  }

  /**
   * Starts the server side of a handshake over `conn`. Writes to the client are counted in `writes`, so the
   * caller can tell when none is in progress (guard_relay.ts). No deadline of its own: the caller destroys it.
   */
  accept(conn: TlsTransport, writes: PendingWrites): TlsHandshake {
    const gate = new ReadGate();
    const transport = denoConnDuplex(conn, writes, gate);
    // node:tls runs over any duplex stream; its types name only a socket.
    const socket = new tls.TLSSocket(transport as unknown as net.Socket, {
      isServer: true,
      secureContext: this.#context,
      ALPNProtocols: ALPN_PROTOCOLS,
    });
    // The TLS layer keeps reading its transport while its reader is paused, megabytes of it: the client's
    // socket is read only while the decrypted side flows (the relay pauses it when it holds back a request).
    socket.on("pause", () => gate.close());
    socket.on("resume", () => gate.open());
    const secured = new Promise<NodeSocketConn>((resolve, reject) => {
      const failed = (error?: Error) =>
        reject(error ?? new Error("the client left during the TLS handshake"));
      socket.once("error", failed);
      socket.once("close", () => failed());
      socket.once("secure", () => {
        socket.off("error", failed);
        resolve(NodeSocketConn.over(socket, conn.localAddr as Deno.NetAddr, conn.remoteAddr as Deno.NetAddr));
      });
    });
    // A handshake nobody waits for any more must not surface as an unhandled rejection.
    secured.catch(() => {});
    return {
      secured,
      destroy: () => {
        socket.destroy();
        transport.destroy();
      },
    };
  }
}

/** Holds reads back while closed; a read asked for meanwhile runs once it opens. */
class ReadGate {
  #closed = false;
  #held?: () => void;

  /** Runs `read` now, or once the gate opens. */
  pass(read: () => void): void {
    if (this.#closed) this.#held = read;
    else read();
  }

  close(): void {
    this.#closed = true;
  }

  open(): void {
    this.#closed = false;
    const held = this.#held;
    this.#held = undefined;
    held?.();
  }
}

/**
 * `conn` as a Node stream for the TLS layer: reads on demand (one at a time, while `gate` is open), writes
 * counted in `writes`. Destroying it closes `conn`.
 */
function denoConnDuplex(conn: TlsTransport, writes: PendingWrites, gate: ReadGate): Duplex {
  let reading = false;
  return new Duplex({
    read() {
      if (reading) return;
      reading = true;
      gate.pass(() => readOnce(this));
    },
    write(bytes: Uint8Array, _encoding, done) {
      writes.writeAll(conn, bytes).then(() => done(), done);
    },
    final(done) {
      conn.closeWrite().then(() => done(), done);
    },
    destroy(error, done) {
      try {
        conn.close();
      } catch {
        // already closed
      }
      done(error);
    },
  });

  function readOnce(stream: Duplex): void {
    const chunk = new Uint8Array(READ_CHUNK_BYTES);
    conn.read(chunk).then(
      (n) => {
        reading = false;
        stream.push(n === null ? null : chunk.subarray(0, n));
      },
      (error) => {
        reading = false;
        stream.destroy(error);
      },
    );
  }
}
