/**
 * Sends messages that carry their own gRPC prefix (`proto/grpc_prefix.ts`) on a grpc-js server call without
 * copying them, and large ones in paced slices.
 *
 * - **No copy.** grpc-js serialises every outgoing message into a new buffer 5 bytes longer and copies the
 *   message in: for a response framed once and shared by a thousand proxies, a thousand copies of megabytes
 *   each. A message whose prefix is in front of it goes out as that one view of the same memory, byte for
 *   byte what grpc-js would have written.
 * - **Paced slices.** The runtime's HTTP/2 stream takes whatever it is handed into native buffers at once and
 *   keeps memory in proportion to the most it ever held for a stream, long after the bytes left: a
 *   thousand proxies each handed 2.4 MiB kept ~1.5 MiB each. A message longer than `sliceBytes` is handed
 *   over a slice at a time, the next once the socket has written the previous, so a stream never holds more
 *   than a slice. Other streams keep the socket busy meanwhile; given `turns`, the streams of one connection
  hand over one slice at a time between them (their pacing reads the connection's socket, which counts every
  stream's bytes).
 *
 * Any other message goes through grpc-js as before. Prefixed messages are written as grpc-js writes one:
 * metadata first, size limits refused by grpc-js, a failed write answered with INTERNAL. A status sent while a message is half written first writes the rest of the message at once, so
 * a proxy never sees a truncated message before the trailers.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { GRPC_PREFIX_BYTES, grpcFrameOf } from "@mesh/proto/grpc_prefix";
import { isOutboundStalled, socketBytesWritten, whenOutboundLeft } from "./outbound_state.ts";
import type { Timers } from "../time/timers.ts";
import { grpcStatus } from "./grpc_status.ts";
import { baseServerCall } from "./base_server_call.ts";
import type { EndTurn, OutboundTurns } from "./outbound_turns.ts";

type Serialize = (value: unknown) => Buffer;

/** The grpc-js call under a server stream (no interceptors), as far as this module reads and wraps it. */
interface InnerCall {
  sendMessage: (message: unknown, callback: () => void) => void;
  sendStatus: (status: { code: number; details: string; metadata: unknown }) => void;
  checkCancelled: () => boolean;
  maybeSendMetadata: () => void;
  readonly handler: { readonly serialize: Serialize };
  readonly maxSendMessageSize: number;
  readonly stream: {
    readonly writableEnded?: boolean;
    write(chunk: Buffer, callback: (error?: Error | null) => void): boolean;
    on?(event: "close", listener: () => void): unknown;
    off?(event: "close", listener: () => void): unknown;
  };
  readonly callEventTracker?: { addMessageSent(): void };
}

/** Options of {@link sendPrefixedWithoutCopy}. */
export interface PrefixedSendOptions {
  /** Messages longer than this (prefix included) are handed to HTTP/2 in slices this long; at least 1 KiB. */
  readonly sliceBytes?: number;
  /**
   * Turns shared by every call of the server: the streams of one connection then hand over one slice at a
   * time between them. Absent, each stream paces only itself.
   */
  readonly turns?: OutboundTurns;
  /** Times the looks at a socket that has not written a slice yet; default the runtime's. */
  readonly timers?: Timers;
  /** Messages at least `fromBytes` long (prefix included) go in slices of `sliceBytes`; absent, none do. */
  readonly large?: LargeMessageSlices;
}

/** Longer slices for long messages. */
export interface LargeMessageSlices {
  /** The shortest message (prefix included) that takes them. */
  readonly fromBytes: number;
  /** Their length; at least the call's own slice. */
  readonly sliceBytes: number;
}

/**
 * The default slice. The runtime's HTTP/2 stream keeps, for as long as it lives, native buffers sized to the
 * largest piece it was handed at once, on every connection; so a slice is half an HTTP/2 frame, and a scoped
 * sidecar's CDS response goes in several (BENCHMARKS.md, "What one connected proxy costs the server").
 */
export const DEFAULT_SLICE_BYTES = 8 * 1024;

/**
 * Slices for messages of a quarter MiB or more (an unscoped sidecar's clusters, routes and endpoints): each
 * slice a connection hands over is a full trip through the runtime's HTTP/2 stream, nghttp2's framing and
 * the socket, paid per slice rather than per byte; four 16 KiB frames per trip cost a fraction of four
 * trips. A stream then keeps up to 64 KiB of native buffer instead of 8, paid only by the streams of proxies
 * whose messages are this long; a scoped sidecar's responses are tens of KiB and keep 8 KiB slices.
 */
export const LARGE_MESSAGE_SLICES: LargeMessageSlices = Object.freeze({
  fromBytes: 256 * 1024,
  sliceBytes: 64 * 1024,
});

/** What every message of one call shares. */
interface CallState {
  readonly call: unknown;
  readonly inner: InnerCall;
  readonly sendStatus: InnerCall["sendStatus"];
  readonly sliceBytes: number;
  readonly large: LargeMessageSlices | undefined;
  readonly turns: OutboundTurns | undefined;
  readonly timers: Timers | undefined;
  /** The message being sliced, whose rest a status writes at once; set while one is. */
  slicing?: PrefixedWrite;
  /**
   * The message whose slice holds its connection's turn, set while one does: the stream's one close listener
   * ends that turn (a stream destroyed under a write may never call it back), rather than a listener added and
   * removed per slice.
   */
  turnHolder?: PrefixedWrite;
  /** The call is over once a status went out: a write failing after it is not reported as another. */
  statusSent?: boolean;
}

/**
 * One prefixed message being written: its slices, each handed over in its connection's turn, and grpc-js's
 * callback once all are written. One object and three callbacks per message, rather than a closure for each
 * step: every proxy's every response is one.
 */
class PrefixedWrite {
  #offset = 0;
  #pendingWrites = 0;
  #ended = false;
  /** The turn of the slice in flight, ended once the socket wrote it or the stream closed. */
  #endTurn: EndTurn | undefined;
  /** The socket's count of bytes written once the slice in flight has left; undefined when unreadable. */
  #target: number | undefined;
  readonly #handSlice = (endTurn: EndTurn): void => this.#slice(endTurn);
  readonly #sliceWritten = (error?: Error | null): void => this.#written(error, true);
  readonly #sliceBytes: number;

  constructor(
    readonly state: CallState,
    readonly frame: Uint8Array,
    readonly callback: () => void,
  ) {
    const large = state.large;
    this.#sliceBytes = large !== undefined && frame.length >= large.fromBytes
      ? large.sliceBytes
      : state.sliceBytes;
  }

  /** Hands over the next slice in the connection's next turn; nothing once all are handed over. */
  next(): void {
    if (this.#ended || this.#offset >= this.frame.length) return;
    const turns = this.state.turns;
    if (turns === undefined) return this.#slice(noTurn);
    turns.take(this.state.call, this.#handSlice);
  }

  /** Writes the rest of the message at once (a status is about to follow it). */
  finish(): void {
    this.state.slicing = undefined;
    if (this.#ended || this.#offset >= this.frame.length) return;
    const rest = this.#piece(this.frame.length);
    this.#write(rest, (error) => this.#written(error, false));
  }

  #slice(endTurn: EndTurn): void {
    const { state, frame } = this;
    const stream = state.inner.stream;
    // A stream reset by the peer or ended under the message takes no more slices (writing to it errs).
    if (
      this.#ended || this.#offset >= frame.length || state.inner.checkCancelled() ||
      stream.writableEnded === true
    ) {
      if (this.#offset < frame.length) this.#stop();
      return endTurn();
    }
    const before = socketBytesWritten(state.call);
    const piece = this.#piece(Math.min(frame.length, this.#offset + this.#sliceBytes));
    if (this.#offset === frame.length && state.slicing === this) state.slicing = undefined;
    this.#target = before === undefined ? undefined : before + piece.length;
    // The turn ends, and the next slice goes, once the socket has written this one or the stream is gone
    // (a stream destroyed under a write may never call it back).
    this.#endTurn = endTurn;
    state.turnHolder = this;
    this.#write(piece, this.#sliceWritten);
  }

  /** The frame from the current offset to `end`, as a Buffer over the same memory; moves the offset. */
  #piece(end: number): Buffer {
    const { frame } = this;
    const piece = Buffer.from(frame.buffer, frame.byteOffset + this.#offset, end - this.#offset);
    this.#offset = end;
    return piece;
  }

  #write(piece: Buffer, written: (error?: Error | null) => void): void {
    this.#pendingWrites++;
    this.state.inner.stream.write(piece, written);
  }

  #written(error: Error | null | undefined, slice: boolean): void {
    this.#pendingWrites--;
    if (slice && (this.#ended || error)) this.releaseTurn();
    if (this.#ended) return;
    if (error) {
      this.#stop();
      const { state } = this;
      if (state.statusSent || state.inner.checkCancelled()) return;
      state.statusSent = true;
      return state.sendStatus.call(state.inner, grpcStatus(grpc.status.INTERNAL, "Internal server error"));
    }
    if (this.#offset >= this.frame.length && this.#pendingWrites === 0) {
      this.#ended = true;
      this.state.inner.callEventTracker?.addMessageSent();
      this.callback();
    }
    if (slice) this.#sliceLeft();
  }

  /** Most slices have left by their write callback: those end the turn there, with no promise. */
  #sliceLeft(): void {
    const { call, timers } = this.state;
    if (!isOutboundStalled(call, this.#target)) return this.#sliceDone();
    const done = () => this.#sliceDone();
    void whenOutboundLeft(call, this.#target, undefined, timers).then(done, done);
  }

  #sliceDone(): void {
    this.releaseTurn();
    this.next();
  }

  /** Ends the turn this message's slice holds, if it holds one. */
  releaseTurn(): void {
    const endTurn = this.#endTurn;
    if (endTurn === undefined) return;
    this.#endTurn = undefined;
    if (this.state.turnHolder === this) this.state.turnHolder = undefined;
    endTurn();
  }

  /** The message will not be written whole: no more slices, and a status no longer finishes it. */
  #stop(): void {
    this.#ended = true;
    if (this.state.slicing === this) this.state.slicing = undefined;
  }
}

/** The turn of a call that paces only itself. */
const noTurn: EndTurn = () => {};

/** True when `inner` has every member this module wraps or calls, as grpc-js 1.14 has. */
function isInnerCall(inner: unknown): inner is InnerCall {
  const c = inner as Partial<InnerCall> | undefined;
  return typeof c?.sendMessage === "function" &&
    typeof c.sendStatus === "function" && typeof c.checkCancelled === "function" &&
    typeof c.maybeSendMetadata === "function" && typeof c.handler?.serialize === "function" &&
    typeof c.stream?.write === "function";
}

/**
 * Makes `call` (a grpc-js server stream) send prefixed messages without copying them, large ones in paced
 * slices; returns false, and changes nothing, when the call is not shaped as this grpc-js version's
 * (messages are then copied and written whole as before, still correct).
 *
 * @throws {RangeError} when `sliceBytes` is below 1024, or `large.sliceBytes` below `sliceBytes`
 */
export function sendPrefixedWithoutCopy(call: unknown, options: PrefixedSendOptions = {}): boolean {
  const sliceBytes = options.sliceBytes ?? DEFAULT_SLICE_BYTES;
  const { turns, large } = options;
  if (!(Number.isInteger(sliceBytes) && sliceBytes >= 1024)) {
    throw new RangeError(`Invalid slice size ${sliceBytes}: expected an integer of at least 1024 bytes`);
  }
  if (large !== undefined && !(Number.isInteger(large.sliceBytes) && large.sliceBytes >= sliceBytes)) {
    throw new RangeError(
      `Invalid large-message slice size ${large.sliceBytes}: expected an integer of at least ${sliceBytes} bytes`,
    );
  }
  const inner = baseServerCall(call);
  if (!isInnerCall(inner)) return false;
  const { sendMessage, sendStatus } = inner;
  const serialize = inner.handler.serialize;
  const state: CallState = { call, inner, sendStatus, sliceBytes, large, turns, timers: options.timers };
  inner.stream.on?.("close", () => state.turnHolder?.releaseTurn());

  // A prefixed message is written here, as grpc-js's own sendMessage writes one (one slice when short).
  inner.sendMessage = function (this: InnerCall, message: unknown, callback: () => void): void {
    // The method's own serialiser first, as grpc-js does: for bytes it returns them, or a view of them.
    const serialized = serialize(message);
    const frame = serialized instanceof Uint8Array ? grpcFrameOf(serialized) : undefined;
    const oversized = frame !== undefined && this.maxSendMessageSize !== -1 &&
      frame.length - GRPC_PREFIX_BYTES > this.maxSendMessageSize;
    // Unprefixed and oversized messages take grpc-js's own path (the latter to be refused as grpc-js does).
    if (frame === undefined || oversized) return sendMessage.call(this, message, callback);
    if (this.checkCancelled()) return;
    this.maybeSendMetadata();
    state.slicing = new PrefixedWrite(state, frame, callback);
    state.slicing.next();
  };

  inner.sendStatus = function (this: InnerCall, status) {
    state.slicing?.finish();
    state.statusSent = true;
    return sendStatus.call(this, status);
  };
  return true;
}
