/**
 * One HTTP/2 connection (h2c, prior knowledge) of the benchmark's own gRPC server: SETTINGS both ways, PING
 * answers, flow control both ways (granting the peer's DATA back, holding ours to the peer's connection and
 * stream windows), GOAWAY and RST_STREAM, and new streams from HEADERS (+ CONTINUATION). Request header
 * blocks are never decoded: every stream is taken as a bidirectional gRPC call, and the responses' header
 * blocks use nothing of the HPACK dynamic table, so skipping them leaves the connection correct.
 *
 * @module
 */
import {
  decodeSettings,
  DEFAULT_MAX_FRAME_SIZE,
  DEFAULT_WINDOW,
  encodeFrame,
  encodeGoaway,
  encodeRstStream,
  encodeSettings,
  encodeWindowUpdate,
  FLAG,
  FRAME,
  type Frame,
  FRAME_HEADER_BYTES,
  FrameReader,
  H2_ERROR,
  H2ConnectionError,
  MAX_MAX_FRAME_SIZE,
  MAX_WINDOW,
  readUint31,
  SETTING,
  writeFrameHeader,
} from "./h2_frames.ts";
import { H2Stream, type StreamCarrier } from "./h2_stream.ts";
import { TurnScheduler, TurnWriter } from "./h2_turn_writer.ts";
import { GrpcFramingError } from "./grpc_deframer.ts";

/** The byte stream under a connection: `Deno.Conn`, or a test's pair of queues. */
export interface H2Transport {
  read(buffer: Uint8Array): Promise<number | null>;
  write(bytes: Uint8Array): Promise<number>;
  close(): void;
}

/** Bounds of one connection. */
export interface H2ConnectionOptions {
  /** Streams open at once (announced in SETTINGS); more are refused with REFUSED_STREAM. */
  readonly maxConcurrentStreams: number;
  /** The receive window of the connection and of each stream, granted back as DATA is read. */
  readonly receiveWindow: number;
  /** The longest request message. */
  readonly maxMessageBytes: number;
  /** The longest request header block (with its CONTINUATIONs). */
  readonly maxHeaderBlockBytes: number;
  /** Bytes of the buffer each read fills. */
  readonly readBufferBytes: number;
}

/** Bounds of a connection unless told otherwise. */
export const DEFAULT_H2_CONNECTION_OPTIONS: H2ConnectionOptions = Object.freeze({
  maxConcurrentStreams: 100,
  receiveWindow: 1 << 20,
  maxMessageBytes: 4 << 20,
  maxHeaderBlockBytes: 64 << 10,
  readBufferBytes: 8 << 10,
});

/** gRPC status codes this connection ends streams with. */
const GRPC_STATUS = { UNIMPLEMENTED: 12, INTERNAL: 13 } as const;

/** A header block being read: its stream, its size so far, and what its HEADERS frame said. */
interface OpenHeaderBlock {
  readonly streamId: number;
  bytes: number;
  readonly endStream: boolean;
  readonly opensStream: boolean;
}

/** Serves one connection until the peer leaves, a protocol error ends it, or `close` is called. */
export class H2Connection implements StreamCarrier {
  readonly #streams = new Map<number, H2Stream>();
  readonly #writer: TurnWriter;
  readonly #reader = new FrameReader(DEFAULT_MAX_FRAME_SIZE);
  /** Streams holding data that the connection window (not their own) keeps back, oldest first. */
  readonly #blocked = new Set<H2Stream>();
  #sendWindow = DEFAULT_WINDOW;
  #peerInitialWindow = DEFAULT_WINDOW;
  #peerMaxFrame = DEFAULT_MAX_FRAME_SIZE;
  #receivedUngranted = 0;
  #lastStreamId = 0;
  #headerBlock: OpenHeaderBlock | undefined;
  #goawaySent = false;
  #closed = false;
  /** True once the peer sent GOAWAY: it opens no more streams. */
  peerGoingAway = false;

  constructor(
    private readonly transport: H2Transport,
    private readonly onStream: (stream: H2Stream) => void,
    scheduler: TurnScheduler,
    private readonly options: H2ConnectionOptions = DEFAULT_H2_CONNECTION_OPTIONS,
  ) {
    this.#writer = new TurnWriter(transport, scheduler, () => this.close());
  }

  /** Streams open now. */
  get streamCount(): number {
    return this.#streams.size;
  }

  /** Writes started on the transport (each carries every frame of one turn). */
  get writes(): number {
    return this.#writer.writes;
  }

  /** Resolves once every queued frame has been written (or the connection failed). */
  drained(): Promise<void> {
    return this.#writer.idle();
  }

  /** Reads and serves frames until the connection ends; never rejects. */
  async serve(): Promise<void> {
    const window = this.options.receiveWindow;
    this.#writer.enqueue(encodeSettings([
      [SETTING.MAX_CONCURRENT_STREAMS, this.options.maxConcurrentStreams],
      [SETTING.INITIAL_WINDOW_SIZE, window],
      [SETTING.ENABLE_PUSH, 0],
    ]));
    if (window > DEFAULT_WINDOW) this.#writer.enqueue(encodeWindowUpdate(0, window - DEFAULT_WINDOW));
    const buffer = new Uint8Array(this.options.readBufferBytes);
    const onFrame = (frame: Frame) => this.#onFrame(frame);
    try {
      while (!this.#closed) {
        const n = await this.transport.read(buffer);
        if (n === null) break;
        this.#reader.push(buffer.subarray(0, n), onFrame);
      }
    } catch (error) {
      if (error instanceof H2ConnectionError) this.#goaway(error.code);
      // Any other failure is the transport's (reset, closed by `close`): there is no one left to tell.
    }
    await this.#shutdown();
  }

  /** Ends the connection: GOAWAY (NO_ERROR), then the transport once what is queued has left. */
  close(): void {
    if (this.#closed) return;
    this.#goaway(H2_ERROR.NO_ERROR);
    void this.#shutdown();
  }

  async #shutdown(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const stream of [...this.#streams.values()]) this.#remove(stream);
    await this.#writer.idle();
    try {
      this.transport.close();
    } catch {
      // Already closed by the peer or by a failed write.
    }
  }

  #goaway(code: number): void {
    if (this.#goawaySent) return;
    this.#goawaySent = true;
    this.#writer.enqueue(encodeGoaway(this.#lastStreamId, code));
  }

  #onFrame(frame: Frame): void {
    if (this.#headerBlock !== undefined && frame.type !== FRAME.CONTINUATION) {
      throw new H2ConnectionError(
        H2_ERROR.PROTOCOL_ERROR,
        `Invalid frame type ${frame.type} inside a header block: expected CONTINUATION`,
      );
    }
    switch (frame.type) {
      case FRAME.DATA:
        return this.#onData(frame);
      case FRAME.HEADERS:
        return this.#onHeaders(frame);
      case FRAME.CONTINUATION:
        return this.#onContinuation(frame);
      case FRAME.RST_STREAM:
        return this.#onRstStream(frame);
      case FRAME.SETTINGS:
        return this.#onSettings(frame);
      case FRAME.PING:
        return this.#onPing(frame);
      case FRAME.GOAWAY:
        this.#needsConnection(frame);
        this.peerGoingAway = true;
        return;
      case FRAME.WINDOW_UPDATE:
        return this.#onWindowUpdate(frame);
      case FRAME.PUSH_PROMISE:
        throw new H2ConnectionError(H2_ERROR.PROTOCOL_ERROR, "Invalid PUSH_PROMISE from a client");
      default:
        // PRIORITY and unknown types carry nothing this server acts on (RFC 9113 §5.5).
        return;
    }
  }

  #needsStream(frame: Frame): void {
    if (frame.streamId === 0) {
      throw new H2ConnectionError(H2_ERROR.PROTOCOL_ERROR, `Invalid frame type ${frame.type} on stream 0`);
    }
  }

  #needsConnection(frame: Frame): void {
    if (frame.streamId !== 0) {
      throw new H2ConnectionError(
        H2_ERROR.PROTOCOL_ERROR,
        `Invalid frame type ${frame.type} on stream ${frame.streamId}: expected stream 0`,
      );
    }
  }

  #onData(frame: Frame): void {
    this.#needsStream(frame);
    const size = frame.payload.length;
    this.#receivedUngranted += size;
    if (this.#receivedUngranted > this.options.receiveWindow) {
      throw new H2ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, "Invalid DATA past the connection window");
    }
    if (this.#receivedUngranted >= this.options.receiveWindow / 2) {
      this.#writer.enqueue(encodeWindowUpdate(0, this.#receivedUngranted));
      this.#receivedUngranted = 0;
    }
    const stream = this.#streams.get(frame.streamId);
    if (stream === undefined || stream.remoteClosed) {
      if (frame.streamId > this.#lastStreamId) {
        throw new H2ConnectionError(H2_ERROR.PROTOCOL_ERROR, `Invalid DATA on idle stream ${frame.streamId}`);
      }
      this.#writer.enqueue(encodeRstStream(frame.streamId, H2_ERROR.STREAM_CLOSED));
      if (stream !== undefined) this.#remove(stream);
      return;
    }
    const endStream = (frame.flags & FLAG.END_STREAM) !== 0;
    if (!endStream) {
      stream.receivedUngranted += size;
      if (stream.receivedUngranted > this.options.receiveWindow) {
        return this.#reset(stream, H2_ERROR.FLOW_CONTROL_ERROR);
      }
      if (stream.receivedUngranted >= this.options.receiveWindow / 2) {
        this.#writer.enqueue(encodeWindowUpdate(stream.id, stream.receivedUngranted));
        stream.receivedUngranted = 0;
      }
    }
    try {
      stream.deframer.push(unpadded(frame), stream.onMessage);
    } catch (error) {
      const code = error instanceof GrpcFramingError && error.message.includes("flag")
        ? GRPC_STATUS.UNIMPLEMENTED
        : GRPC_STATUS.INTERNAL;
      stream.end(code, (error as Error).message);
      return;
    }
    if (endStream) this.#remoteEnd(stream);
  }

  #onHeaders(frame: Frame): void {
    this.#needsStream(frame);
    const payload = frame.payload;
    let start = 0;
    let end = payload.length;
    if ((frame.flags & FLAG.PADDED) !== 0) {
      start = 1;
      end -= payload[0] ?? 0;
    }
    if ((frame.flags & FLAG.PRIORITY) !== 0) start += 5;
    if (start > end) {
      throw new H2ConnectionError(H2_ERROR.PROTOCOL_ERROR, "Invalid HEADERS padding: longer than the frame");
    }
    const opensStream = !this.#streams.has(frame.streamId);
    if (opensStream) {
      if (frame.streamId % 2 === 0 || frame.streamId <= this.#lastStreamId) {
        throw new H2ConnectionError(
          H2_ERROR.PROTOCOL_ERROR,
          `Invalid new stream id ${frame.streamId}: expected an odd id above ${this.#lastStreamId}`,
        );
      }
      this.#lastStreamId = frame.streamId;
    }
    this.#headerBlock = {
      streamId: frame.streamId,
      bytes: 0,
      endStream: (frame.flags & FLAG.END_STREAM) !== 0,
      opensStream,
    };
    this.#headerFragment(end - start, frame.flags);
  }

  #onContinuation(frame: Frame): void {
    if (this.#headerBlock === undefined || this.#headerBlock.streamId !== frame.streamId) {
      throw new H2ConnectionError(
        H2_ERROR.PROTOCOL_ERROR,
        `Invalid CONTINUATION on stream ${frame.streamId}: expected one after HEADERS on that stream`,
      );
    }
    this.#headerFragment(frame.payload.length, frame.flags);
  }

  /** Counts a fragment of the open header block (never decoded) and finishes the block on END_HEADERS. */
  #headerFragment(bytes: number, flags: number): void {
    const block = this.#headerBlock!;
    block.bytes += bytes;
    if (block.bytes > this.options.maxHeaderBlockBytes) {
      throw new H2ConnectionError(
        H2_ERROR.ENHANCE_YOUR_CALM,
        `Invalid header block of over ${this.options.maxHeaderBlockBytes} bytes`,
      );
    }
    if ((flags & FLAG.END_HEADERS) === 0) return;
    this.#headerBlock = undefined;
    if (!block.opensStream) {
      // Trailers of the request: they end the peer's side, or the request is malformed.
      const stream = this.#streams.get(block.streamId);
      if (stream === undefined) return;
      if (block.endStream && !stream.remoteClosed) this.#remoteEnd(stream);
      else this.#reset(stream, H2_ERROR.PROTOCOL_ERROR);
      return;
    }
    if (this.#goawaySent || this.#streams.size >= this.options.maxConcurrentStreams) {
      this.#writer.enqueue(encodeRstStream(block.streamId, H2_ERROR.REFUSED_STREAM));
      return;
    }
    const stream = new H2Stream(block.streamId, this.#peerInitialWindow, this.options.maxMessageBytes, this);
    this.#streams.set(stream.id, stream);
    this.onStream(stream);
    if (block.endStream) this.#remoteEnd(stream);
  }

  #onRstStream(frame: Frame): void {
    this.#needsStream(frame);
    if (frame.payload.length !== 4) {
      throw new H2ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, "Invalid RST_STREAM length: expected 4");
    }
    const stream = this.#streams.get(frame.streamId);
    if (stream !== undefined) this.#remove(stream);
  }

  #onSettings(frame: Frame): void {
    this.#needsConnection(frame);
    if ((frame.flags & FLAG.ACK) !== 0) {
      if (frame.payload.length !== 0) {
        throw new H2ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, "Invalid SETTINGS ACK with a payload");
      }
      return;
    }
    let grown = false;
    for (const [id, value] of decodeSettings(frame.payload)) {
      if (id === SETTING.INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) {
          throw new H2ConnectionError(
            H2_ERROR.FLOW_CONTROL_ERROR,
            `Invalid INITIAL_WINDOW_SIZE ${value}: expected at most ${MAX_WINDOW}`,
          );
        }
        // A change applies to every open stream's window, which may go below zero (RFC 9113 §6.9.2).
        const delta = value - this.#peerInitialWindow;
        this.#peerInitialWindow = value;
        for (const stream of this.#streams.values()) stream.sendWindow += delta;
        grown ||= delta > 0;
      } else if (id === SETTING.MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME_SIZE || value > MAX_MAX_FRAME_SIZE) {
          throw new H2ConnectionError(
            H2_ERROR.PROTOCOL_ERROR,
            `Invalid MAX_FRAME_SIZE ${value}: expected ${DEFAULT_MAX_FRAME_SIZE}..${MAX_MAX_FRAME_SIZE}`,
          );
        }
        this.#peerMaxFrame = value;
      }
    }
    this.#writer.enqueue(encodeFrame(FRAME.SETTINGS, FLAG.ACK, 0));
    if (grown) { for (const stream of [...this.#streams.values()]) this.pump(stream); }
  }

  #onPing(frame: Frame): void {
    this.#needsConnection(frame);
    if (frame.payload.length !== 8) {
      throw new H2ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, "Invalid PING length: expected 8");
    }
    if ((frame.flags & FLAG.ACK) === 0) {
      this.#writer.enqueue(encodeFrame(FRAME.PING, FLAG.ACK, 0, frame.payload));
    }
  }

  #onWindowUpdate(frame: Frame): void {
    if (frame.payload.length !== 4) {
      throw new H2ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, "Invalid WINDOW_UPDATE length: expected 4");
    }
    const increment = readUint31(frame.payload, 0);
    if (frame.streamId === 0) {
      if (increment === 0) {
        throw new H2ConnectionError(H2_ERROR.PROTOCOL_ERROR, "Invalid WINDOW_UPDATE of 0 on the connection");
      }
      this.#sendWindow += increment;
      if (this.#sendWindow > MAX_WINDOW) {
        throw new H2ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, "Invalid connection window past 2^31-1");
      }
      const waiting = [...this.#blocked];
      this.#blocked.clear();
      for (const stream of waiting) this.pump(stream);
      return;
    }
    const stream = this.#streams.get(frame.streamId);
    if (stream === undefined) return;
    if (increment === 0) return this.#reset(stream, H2_ERROR.PROTOCOL_ERROR);
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW) return this.#reset(stream, H2_ERROR.FLOW_CONTROL_ERROR);
    this.pump(stream);
  }

  /** Sends a header block as one HEADERS frame (the blocks of `h2_grpc_headers.ts` are far below a frame). */
  sendHeaders(stream: H2Stream, block: Uint8Array, endStream: boolean): void {
    stream.headersSent = true;
    const flags = FLAG.END_HEADERS | (endStream ? FLAG.END_STREAM : 0);
    this.#writer.enqueue(encodeFrame(FRAME.HEADERS, flags, stream.id, block));
  }

  /** Sends the stream's queued data as far as both windows allow, then its trailers once nothing is left. */
  pump(stream: H2Stream): void {
    if (stream.closed) return;
    while (stream.pendingBytes > 0) {
      const room = Math.min(this.#sendWindow, stream.sendWindow, this.#peerMaxFrame);
      if (room <= 0) {
        if (this.#sendWindow <= 0) this.#blocked.add(stream);
        return;
      }
      const length = Math.min(room, stream.pendingBytes);
      const header = new Uint8Array(FRAME_HEADER_BYTES);
      writeFrameHeader(header, 0, length, FRAME.DATA, 0, stream.id);
      this.#writer.enqueue(header);
      stream.take(length, (chunk) => this.#writer.enqueue(chunk));
      this.#sendWindow -= length;
      stream.sendWindow -= length;
    }
    const trailers = stream.trailers;
    if (trailers === undefined) return;
    stream.trailers = undefined;
    this.sendHeaders(stream, trailers, true);
    // A response that ends before the request does resets the rest of the request (as gRPC servers do).
    if (!stream.remoteClosed) this.#writer.enqueue(encodeRstStream(stream.id, H2_ERROR.NO_ERROR));
    this.#remove(stream);
  }

  #remoteEnd(stream: H2Stream): void {
    stream.remoteClosed = true;
    stream.onEnd();
  }

  #reset(stream: H2Stream, code: number): void {
    this.#writer.enqueue(encodeRstStream(stream.id, code));
    this.#remove(stream);
  }

  #remove(stream: H2Stream): void {
    this.#streams.delete(stream.id);
    this.#blocked.delete(stream);
    if (stream.closed) return;
    stream.closed = true;
    stream.discard();
    stream.onClose();
  }
}

/** A DATA frame's data, without its padding. */
function unpadded(frame: Frame): Uint8Array {
  if ((frame.flags & FLAG.PADDED) === 0) return frame.payload;
  const pad = frame.payload[0] ?? 0;
  if (pad >= frame.payload.length) {
    throw new H2ConnectionError(H2_ERROR.PROTOCOL_ERROR, "Invalid DATA padding: longer than the frame");
  }
  return frame.payload.subarray(1, frame.payload.length - pad);
}
