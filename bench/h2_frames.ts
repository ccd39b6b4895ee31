/**
 * HTTP/2 frames (RFC 9113 §4, §6) for the benchmark's own HTTP/2 server: the frame types, flags, settings and
 * error codes it uses, encoders for the frames it sends, and a reader that cuts a byte stream (after the
 * client's connection preface) into frames.
 *
 * @module
 */

/** Frame types (RFC 9113 §6). */
export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

/** Frame flags; ACK shares END_STREAM's bit on SETTINGS and PING. */
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

/** Settings identifiers (RFC 9113 §6.5.2). */
export const SETTING = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

/** Error codes of RST_STREAM and GOAWAY (RFC 9113 §7). */
export const H2_ERROR = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  ENHANCE_YOUR_CALM: 0xb,
} as const;

/** Bytes of a frame header: length (3), type, flags, stream id (4). */
export const FRAME_HEADER_BYTES = 9;

/** The smallest MAX_FRAME_SIZE, every peer's until it says otherwise. */
export const DEFAULT_MAX_FRAME_SIZE = 16_384;

/** The largest MAX_FRAME_SIZE a peer may announce. */
export const MAX_MAX_FRAME_SIZE = 16_777_215;

/** Every window's size until SETTINGS or WINDOW_UPDATE say otherwise. */
export const DEFAULT_WINDOW = 65_535;

/** The largest flow-control window (2^31 - 1). */
export const MAX_WINDOW = 0x7fff_ffff;

/** What a client sends first, before its SETTINGS (RFC 9113 §3.4). */
export const CONNECTION_PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/** A connection error: the connection must end with a GOAWAY carrying `code`. */
export class H2ConnectionError extends Error {
  /** The GOAWAY error code. */
  readonly code: number;

  constructor(code: number, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "H2ConnectionError";
    this.code = code;
  }
}

/** One frame as read; `payload` is a view valid only during the `onFrame` call that receives it. */
export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Uint8Array;
}

/** Writes a frame header for a payload of `length` bytes into `target` at `offset`. */
export function writeFrameHeader(
  target: Uint8Array,
  offset: number,
  length: number,
  type: number,
  flags: number,
  streamId: number,
): void {
  target[offset] = length >>> 16;
  target[offset + 1] = (length >>> 8) & 0xff;
  target[offset + 2] = length & 0xff;
  target[offset + 3] = type;
  target[offset + 4] = flags;
  target[offset + 5] = (streamId >>> 24) & 0x7f;
  target[offset + 6] = (streamId >>> 16) & 0xff;
  target[offset + 7] = (streamId >>> 8) & 0xff;
  target[offset + 8] = streamId & 0xff;
}

/** A whole frame: its header, then a copy of `payload`. */
export function encodeFrame(
  type: number,
  flags: number,
  streamId: number,
  payload: Uint8Array = new Uint8Array(0),
): Uint8Array {
  const frame = new Uint8Array(FRAME_HEADER_BYTES + payload.length);
  writeFrameHeader(frame, 0, payload.length, type, flags, streamId);
  frame.set(payload, FRAME_HEADER_BYTES);
  return frame;
}

/** A SETTINGS frame holding `entries` (identifier, value) in order. */
export function encodeSettings(entries: readonly (readonly [number, number])[]): Uint8Array {
  const payload = new Uint8Array(6 * entries.length);
  const view = new DataView(payload.buffer);
  entries.forEach(([id, value], i) => {
    view.setUint16(6 * i, id);
    view.setUint32(6 * i + 2, value);
  });
  return encodeFrame(FRAME.SETTINGS, 0, 0, payload);
}

/**
 * The (identifier, value) pairs of a SETTINGS payload, in order.
 *
 * @throws {H2ConnectionError} FRAME_SIZE_ERROR when the payload is not a whole number of settings
 */
export function decodeSettings(payload: Uint8Array): [number, number][] {
  if (payload.length % 6 !== 0) {
    throw new H2ConnectionError(
      H2_ERROR.FRAME_SIZE_ERROR,
      `Invalid SETTINGS length ${payload.length}: expected a multiple of 6`,
    );
  }
  const view = new DataView(payload.buffer, payload.byteOffset, payload.length);
  const entries: [number, number][] = [];
  for (let at = 0; at < payload.length; at += 6) entries.push([view.getUint16(at), view.getUint32(at + 2)]);
  return entries;
}

/** A 4-byte big-endian payload (WINDOW_UPDATE's increment, RST_STREAM's code). */
function uint32Payload(value: number): Uint8Array {
  const payload = new Uint8Array(4);
  new DataView(payload.buffer).setUint32(0, value);
  return payload;
}

/** A WINDOW_UPDATE frame granting `increment` bytes on `streamId` (0: the connection). */
export function encodeWindowUpdate(streamId: number, increment: number): Uint8Array {
  return encodeFrame(FRAME.WINDOW_UPDATE, 0, streamId, uint32Payload(increment));
}

/** An RST_STREAM frame ending `streamId` with `code`. */
export function encodeRstStream(streamId: number, code: number): Uint8Array {
  return encodeFrame(FRAME.RST_STREAM, 0, streamId, uint32Payload(code));
}

/** A GOAWAY frame: streams above `lastStreamId` were not processed; `code` says why. */
export function encodeGoaway(lastStreamId: number, code: number): Uint8Array {
  const payload = new Uint8Array(8);
  const view = new DataView(payload.buffer);
  view.setUint32(0, lastStreamId & MAX_WINDOW);
  view.setUint32(4, code);
  return encodeFrame(FRAME.GOAWAY, 0, 0, payload);
}

/** Reads a 31-bit big-endian value (stream id, window increment) at `offset`. */
export function readUint31(bytes: Uint8Array, offset: number): number {
  return ((bytes[offset] & 0x7f) * 0x100_0000) + (bytes[offset + 1] << 16) + (bytes[offset + 2] << 8) +
    bytes[offset + 3];
}

/** Reads a 32-bit big-endian value (an error code) at `offset`. */
export function readUint32(bytes: Uint8Array, offset: number): number {
  return (bytes[offset] * 0x100_0000) + (bytes[offset + 1] << 16) + (bytes[offset + 2] << 8) +
    bytes[offset + 3];
}

/**
 * Cuts the bytes a client sends into frames: first its connection preface, then frames of at most
 * `maxFrameSize` payload bytes. Bytes of an unfinished frame are kept (copied) until the rest arrives.
 */
export class FrameReader {
  #held: Uint8Array = new Uint8Array(0);
  #prefaceSeen = 0;

  /** With `expectPreface` false, frames start at the first byte (a client reading a server). */
  constructor(readonly maxFrameSize: number = DEFAULT_MAX_FRAME_SIZE, expectPreface = true) {
    if (!expectPreface) this.#prefaceSeen = CONNECTION_PREFACE.length;
  }

  /**
   * Feeds `chunk` and calls `onFrame` for every whole frame in order.
   *
   * @throws {H2ConnectionError} PROTOCOL_ERROR on a wrong preface, FRAME_SIZE_ERROR on an oversized frame
   */
  push(chunk: Uint8Array, onFrame: (frame: Frame) => void): void {
    let data = chunk;
    if (this.#held.length > 0) {
      data = new Uint8Array(this.#held.length + chunk.length);
      data.set(this.#held);
      data.set(chunk, this.#held.length);
    }
    let at = 0;
    while (this.#prefaceSeen < CONNECTION_PREFACE.length && at < data.length) {
      if (data[at] !== CONNECTION_PREFACE[this.#prefaceSeen]) {
        throw new H2ConnectionError(
          H2_ERROR.PROTOCOL_ERROR,
          "Invalid connection preface: expected HTTP/2 prior knowledge (PRI * HTTP/2.0)",
        );
      }
      at++;
      this.#prefaceSeen++;
    }
    while (data.length - at >= FRAME_HEADER_BYTES) {
      const length = (data[at] << 16) + (data[at + 1] << 8) + data[at + 2];
      if (length > this.maxFrameSize) {
        throw new H2ConnectionError(
          H2_ERROR.FRAME_SIZE_ERROR,
          `Invalid frame length ${length}: expected at most ${this.maxFrameSize}`,
        );
      }
      if (data.length - at < FRAME_HEADER_BYTES + length) break;
      const start = at + FRAME_HEADER_BYTES;
      onFrame({
        type: data[at + 3],
        flags: data[at + 4],
        streamId: readUint31(data, at + 5),
        payload: data.subarray(start, start + length),
      });
      at = start + length;
    }
    this.#held = at === data.length ? new Uint8Array(0) : data.slice(at);
  }
}
