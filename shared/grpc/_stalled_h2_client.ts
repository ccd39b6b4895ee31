/**
 * Test helper: a minimal HTTP/2 gRPC client over a raw TCP socket that opens one stream, sends one message
 * and then never grants flow-control credit (no WINDOW_UPDATE), like a proxy that stopped reading. The
 * server can send it at most the initial 65,535-byte window; after that its writes wait. (grpc-js clients in
 * Deno keep granting credit even when paused, so they cannot play this part.) Opened with a wide window, it
 * plays the other stalled proxy: one that granted all the credit it could and then stopped reading its
 * socket, so the server's bytes wait in socket buffers instead. More streams can be opened on the connection.
 *
 * @module
 */
import { GRPC_PREFIX_BYTES, writeGrpcPrefix } from "@mesh/proto/grpc_prefix";

const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const DATA = 0x0, HEADERS = 0x1, RST_STREAM = 0x3, SETTINGS = 0x4, PING = 0x6, WINDOW_UPDATE = 0x8;
const END_STREAM = 0x1, ACK = 0x1, END_HEADERS = 0x4;
const STREAM = 1;
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;

function windowIncrement(bytes: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, bytes);
  return out;
}

function frame(
  type: number,
  flags: number,
  stream: number,
  payload: Uint8Array = new Uint8Array(),
): Uint8Array {
  const out = new Uint8Array(9 + payload.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, payload.length << 8);
  out[3] = type;
  out[4] = flags;
  view.setUint32(5, stream & 0x7fffffff);
  out.set(payload, 9);
  return out;
}

/** HPACK "literal header field without indexing, new name", no Huffman coding; names and values < 127 bytes. */
function literalHeader(name: string, value: string): number[] {
  const n = new TextEncoder().encode(name);
  const v = new TextEncoder().encode(value);
  return [0x00, n.length, ...n, v.length, ...v];
}

/** `message` with its gRPC length prefix. */
function grpcMessage(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(GRPC_PREFIX_BYTES + message.length);
  writeGrpcPrefix(out, 0, message.length);
  out.set(message, GRPC_PREFIX_BYTES);
  return out;
}

/**
 * Real time for a server's transport to act on what a stalled client took, before a test checks that nothing
 * more was sent: Deno 2.9.3 calls a write back at once and the sender then looks at the socket on its clock;
 * later releases call it back only once the data is under way. Either way nothing more may leave until the
 * client reads again.
 */
export function transportAtRest(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 50));
}

/** A gRPC client stream that stops granting flow-control credit after its request. */
export class StalledH2Client {
  /** DATA payload bytes received on its streams. */
  dataBytes = 0;
  /** True once the server ended a stream (trailers with END_STREAM, or RST_STREAM). */
  streamEnded = false;
  /** True once the connection is gone. */
  connectionClosed = false;
  readonly #conn: Deno.Conn;
  #headers = new Uint8Array();
  #nextStream = STREAM + 2;
  #reading: Promise<void> | undefined;
  #paused: { promise: Promise<void>; resolve: () => void } | undefined;

  private constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  /**
   * Connects to 127.0.0.1:`port` (or the Unix socket `{ unix }`), opens `path` and sends one gRPC message.
   * With `wideWindow`, the client grants the largest stream and connection windows HTTP/2 allows at once.
   */
  static async open(
    port: number | { readonly unix: string },
    path: string,
    message: Uint8Array,
    options: { wideWindow?: boolean } = {},
  ): Promise<StalledH2Client> {
    const conn = typeof port === "number"
      ? await Deno.connect({ hostname: "127.0.0.1", port })
      : await Deno.connect({ transport: "unix", path: port.unix });
    const client = new StalledH2Client(conn);
    const headers = Uint8Array.from([
      ...literalHeader(":method", "POST"),
      ...literalHeader(":scheme", "http"),
      ...literalHeader(":path", path),
      ...literalHeader(":authority", typeof port === "number" ? `127.0.0.1:${port}` : "localhost"),
      ...literalHeader("content-type", "application/grpc"),
      ...literalHeader("te", "trailers"),
    ]);
    client.#headers = headers;
    const settings = new Uint8Array(options.wideWindow ? 6 : 0);
    if (options.wideWindow) {
      const view = new DataView(settings.buffer);
      view.setUint16(0, SETTINGS_INITIAL_WINDOW_SIZE);
      view.setUint32(2, 0x7fffffff);
    }
    await client.#write(
      PREFACE,
      frame(SETTINGS, 0, 0, settings),
      frame(HEADERS, END_HEADERS, STREAM, headers),
    );
    if (options.wideWindow) await client.#write(frame(WINDOW_UPDATE, 0, 0, windowIncrement(0x7fff0000)));
    await client.#write(frame(DATA, 0, STREAM, grpcMessage(message)));
    client.#reading = client.#readLoop();
    return client;
  }

  /** Opens one more stream of the same path on this connection and sends one gRPC message on it. */
  async openStream(message: Uint8Array): Promise<void> {
    const id = this.#nextStream;
    this.#nextStream += 2;
    await this.#write(
      frame(HEADERS, END_HEADERS, id, this.#headers),
      frame(DATA, 0, id, grpcMessage(message)),
    );
  }

  /** Grants a large amount of credit, as a proxy that starts reading again would. */
  async resume(): Promise<void> {
    const increment = windowIncrement(0x7fff0000);
    await this.#write(frame(WINDOW_UPDATE, 0, 0, increment), frame(WINDOW_UPDATE, 0, STREAM, increment));
  }

  /** Stops reading the socket: what the server sends waits in socket buffers. */
  pauseReading(): void {
    if (this.#paused !== undefined) return;
    let resolve = () => {};
    const promise = new Promise<void>((r) => resolve = r);
    this.#paused = { promise, resolve };
  }

  /** Reads the socket again. */
  resumeReading(): void {
    this.#paused?.resolve();
    this.#paused = undefined;
  }

  /** Closes the socket and waits for the read loop to stop. */
  async close(): Promise<void> {
    this.resumeReading();
    if (!this.connectionClosed) {
      this.connectionClosed = true;
      try {
        this.#conn.close();
      } catch {
        // Already closed by the server.
      }
    }
    await this.#reading;
  }

  async #write(...frames: Uint8Array[]): Promise<void> {
    for (const f of frames) {
      let written = 0;
      while (written < f.length) written += await this.#conn.write(f.subarray(written));
    }
  }

  async #readLoop(): Promise<void> {
    let pending = new Uint8Array(0);
    const chunk = new Uint8Array(64 * 1024);
    for (;;) {
      if (this.#paused !== undefined) await this.#paused.promise;
      let n: number | null;
      try {
        n = await this.#conn.read(chunk);
      } catch {
        n = null;
      }
      if (n === null) break;
      const joined = new Uint8Array(pending.length + n);
      joined.set(pending);
      joined.set(chunk.subarray(0, n), pending.length);
      pending = joined;
      while (pending.length >= 9) {
        const length = (pending[0] << 16) | (pending[1] << 8) | pending[2];
        if (pending.length < 9 + length) break;
        const type = pending[3], flags = pending[4];
        const payload = pending.slice(9, 9 + length);
        pending = pending.subarray(9 + length);
        await this.#onFrame(type, flags, payload).catch(() => {});
      }
    }
    this.connectionClosed = true;
  }

  async #onFrame(type: number, flags: number, payload: Uint8Array): Promise<void> {
    if (type === SETTINGS && !(flags & ACK)) await this.#write(frame(SETTINGS, ACK, 0));
    else if (type === PING && !(flags & ACK)) await this.#write(frame(PING, ACK, 0, payload));
    else if (type === DATA) {
      this.dataBytes += payload.length;
      if (flags & END_STREAM) this.streamEnded = true;
    } else if (type === HEADERS && flags & END_STREAM) this.streamEnded = true;
    else if (type === RST_STREAM) this.streamEnded = true;
  }
}
