/**
 * Follows the HTTP/2 frames a server writes to one connection and reports the error code of the first GOAWAY
 * that carries an error: how the transport learns that nghttp2 dropped a peer for a protocol violation, which
 * the runtime does not surface as an event.
 *
 * @module
 */

/** HTTP/2 error codes by number (RFC 9113 §7), for logs and metric labels. */
export const HTTP2_ERROR_NAMES: readonly string[] = Object.freeze([
  "NO_ERROR",
  "PROTOCOL_ERROR",
  "INTERNAL_ERROR",
  "FLOW_CONTROL_ERROR",
  "SETTINGS_TIMEOUT",
  "STREAM_CLOSED",
  "FRAME_SIZE_ERROR",
  "REFUSED_STREAM",
  "CANCEL",
  "COMPRESSION_ERROR",
  "CONNECT_ERROR",
  "ENHANCE_YOUR_CALM",
  "INADEQUATE_SECURITY",
  "HTTP_1_1_REQUIRED",
]);

/** The name of an HTTP/2 error code, or `UNKNOWN_<n>`. */
export function http2ErrorName(code: number): string {
  return HTTP2_ERROR_NAMES[code] ?? `UNKNOWN_${code}`;
}

const FRAME_HEADER_BYTES = 9;
/** The frame header's fourth byte: the frame's type. */
const TYPE_BYTE = 3;
const GOAWAY = 7;
/** Last-stream-id (4 bytes) then the error code (4 bytes). */
const GOAWAY_CODE_END = 8;
/** Where the error code starts in a GOAWAY payload. */
const GOAWAY_CODE_START = 4;

/**
 * Reads a server's outbound byte stream as HTTP/2 frames (the server sends no connection preface, so the first
 * byte starts a frame). Only frame headers and the first 8 bytes of GOAWAY payloads are looked at; everything
 * else is skipped by length, so the cost is per frame, not per byte. Chunks may split frames anywhere.
 *
 * Its state is a few numbers, not byte buffers: every connection of a server has one, for as long as it lives.
 */
export class Http2GoawayScanner {
  /** Bytes of the current frame header read so far. */
  #headerFilled = 0;
  /** The current frame header's length field, as far as read, and its type. */
  #length = 0;
  #type = 0;
  /** Payload bytes of the current frame not yet passed. */
  #payloadLeft = 0;
  #inGoaway = false;
  /** Bytes of the current GOAWAY's head read so far, and its error code as far as read. */
  #goawayFilled = 0;
  #code = 0;
  #found: number | undefined;

  /** The error code of the first GOAWAY seen that is not NO_ERROR, if any. */
  get goawayCode(): number | undefined {
    return this.#found;
  }

  /**
   * Feeds the next written bytes; returns the error code when this chunk completed the first GOAWAY with an
   * error. GOAWAYs with NO_ERROR (graceful shutdown, connection age) are passed over.
   */
  feed(chunk: Uint8Array): number | undefined {
    if (this.#found !== undefined) return undefined;
    let at = 0;
    while (at < chunk.length) {
      if (this.#payloadLeft === 0 && !this.#inGoaway) {
        for (; this.#headerFilled < FRAME_HEADER_BYTES && at < chunk.length; this.#headerFilled++, at++) {
          const byte = chunk[at];
          if (this.#headerFilled < TYPE_BYTE) this.#length = (this.#length << 8) | byte;
          else if (this.#headerFilled === TYPE_BYTE) this.#type = byte;
        }
        if (this.#headerFilled < FRAME_HEADER_BYTES) break;
        this.#headerFilled = 0;
        this.#payloadLeft = this.#length;
        this.#inGoaway = this.#type === GOAWAY;
        this.#length = 0;
        this.#goawayFilled = 0;
        this.#code = 0;
        if (this.#inGoaway && this.#payloadLeft < GOAWAY_CODE_END) this.#inGoaway = false; // malformed: skip it
        continue;
      }
      if (this.#inGoaway) {
        for (; this.#goawayFilled < GOAWAY_CODE_END && at < chunk.length; this.#goawayFilled++, at++) {
          if (this.#goawayFilled >= GOAWAY_CODE_START) this.#code = (this.#code * 256) + chunk[at];
          this.#payloadLeft--;
        }
        if (this.#goawayFilled < GOAWAY_CODE_END) break;
        this.#inGoaway = false;
        if (this.#code === 0) continue;
        this.#found = this.#code;
        return this.#code;
      }
      const skip = Math.min(this.#payloadLeft, chunk.length - at);
      this.#payloadLeft -= skip;
      at += skip;
    }
    return undefined;
  }
}
