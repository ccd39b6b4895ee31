/**
 * One gRPC call on the benchmark's own HTTP/2 server: the messages it was sent, the messages it writes (kept
 * until the peer's windows let them out), and how each side ended it.
 *
 * @module
 */
import { GRPC_PREFIX_BYTES, writeGrpcPrefix } from "../proto/grpc_prefix.ts";
import { GrpcDeframer } from "./grpc_deframer.ts";
import { RESPONSE_HEADERS_BLOCK, trailersBlock, trailersOnlyBlock } from "./h2_grpc_headers.ts";

/** What a stream asks of the connection that carries it. */
export interface StreamCarrier {
  /** Sends a header block on the stream now (headers are not flow-controlled). */
  sendHeaders(stream: H2Stream, block: Uint8Array, endStream: boolean): void;
  /** Sends as much of the stream's queued data (and then its trailers) as the windows allow. */
  pump(stream: H2Stream): void;
}

/** The longest `grpc-message` a stream sends; longer ones are cut. */
const MAX_STATUS_MESSAGE = 512;

/** A server-side gRPC stream: read with the `on*` callbacks, answer with `write*` and `end`. */
export class H2Stream {
  /** Bytes the peer lets this stream send now (may go below zero when the peer shrinks its windows). */
  sendWindow: number;
  /** DATA bytes received and not yet granted back to the peer. */
  receivedUngranted = 0;
  /** True once the response headers left. */
  headersSent = false;
  /** The trailer block waiting for the queued data to leave, after `end`. */
  trailers: Uint8Array | undefined;
  /** True once `end` was called: nothing more is written. */
  ended = false;
  /** True once the peer half-closed (END_STREAM). */
  remoteClosed = false;
  /** True once the stream is gone (both sides done, reset, or the connection closed). */
  closed = false;
  /** Called with each request message (a copy the callee may keep). */
  onMessage: (message: Uint8Array) => void = () => {};
  /** Called when the peer half-closes. */
  onEnd: () => void = () => {};
  /** Called once when the stream is gone, however it went. */
  onClose: () => void = () => {};
  readonly deframer: GrpcDeframer;
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;

  constructor(
    readonly id: number,
    sendWindow: number,
    maxMessageBytes: number,
    private readonly carrier: StreamCarrier,
  ) {
    this.sendWindow = sendWindow;
    this.deframer = new GrpcDeframer(maxMessageBytes);
  }

  /** Writes one message (its gRPC prefix is added); false when the stream no longer takes writes. */
  write(message: Uint8Array): boolean {
    const frame = new Uint8Array(GRPC_PREFIX_BYTES + message.length);
    writeGrpcPrefix(frame, 0, message.length);
    frame.set(message, GRPC_PREFIX_BYTES);
    return this.writeFramed(frame);
  }

  /**
   * Writes a message already framed with its gRPC prefix; the frame is kept by reference until sent, so one
   * frame can be written to many streams. False when the stream no longer takes writes.
   */
  writeFramed(frame: Uint8Array): boolean {
    if (this.ended || this.closed) return false;
    if (!this.headersSent) this.carrier.sendHeaders(this, RESPONSE_HEADERS_BLOCK, false);
    this.#pending.push(frame);
    this.#pendingBytes += frame.length;
    this.carrier.pump(this);
    return true;
  }

  /** Ends the response with `status` (after every queued message); later calls do nothing. */
  end(status = 0, message?: string): void {
    if (this.ended || this.closed) return;
    this.ended = true;
    const details = message === undefined ? undefined : message.slice(0, MAX_STATUS_MESSAGE);
    if (!this.headersSent) {
      this.trailers = trailersOnlyBlock(status, details);
    } else {
      this.trailers = trailersBlock(status, details);
    }
    this.carrier.pump(this);
  }

  /** Bytes queued and not yet sent. */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /** Hands the next `bytes` queued bytes to `out` (as views of the queued frames) and forgets them. */
  take(bytes: number, out: (chunk: Uint8Array) => void): void {
    let left = bytes;
    while (left > 0) {
      const head = this.#pending[0];
      if (head.length <= left) {
        out(head);
        this.#pending.shift();
        left -= head.length;
      } else {
        out(head.subarray(0, left));
        this.#pending[0] = head.subarray(left);
        left = 0;
      }
    }
    this.#pendingBytes -= bytes;
  }

  /** Drops what was queued: the stream is gone. */
  discard(): void {
    this.#pending = [];
    this.#pendingBytes = 0;
    this.trailers = undefined;
  }
}
