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
const GOAWAY = 7;
/** Last-stream-id (4 bytes) then the error code (4 bytes). */
const GOAWAY_CODE_END = 8;

/**
 * Reads a server's outbound byte stream as HTTP/2 frames (the server sends no connection preface, so the first
 * byte starts a frame). Only frame headers and the first 8 bytes of GOAWAY payloads are looked at; everything
 * else is skipped by length, so the cost is per frame, not per byte. Chunks may split frames anywhere.
 */
export class Http2GoawayScanner {
  readonly #header = new Uint8Array(FRAME_HEADER_BYTES);
  #headerFilled = 0;
  /** Payload bytes of the current frame not yet passed. */
  #payloadLeft = 0;
  #inGoaway = false;
  readonly #goawayHead = new Uint8Array(GOAWAY_CODE_END);
  #goawayFilled = 0;
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
        const take = Math.min(FRAME_HEADER_BYTES - this.#headerFilled, chunk.length - at);
        this.#header.set(chunk.subarray(at, at + take), this.#headerFilled);
        this.#headerFilled += take;
        at += take;
        if (this.#headerFilled < FRAME_HEADER_BYTES) break;
        this.#headerFilled = 0;
        const h = this.#header;
        this.#payloadLeft = (h[0] << 16) | (h[1] << 8) | h[2];
        this.#inGoaway = h[3] === GOAWAY;
        this.#goawayFilled = 0;
        if (this.#inGoaway && this.#payloadLeft < GOAWAY_CODE_END) this.#inGoaway = false; // malformed: skip it
        continue;
      }
      if (this.#inGoaway) {
        const take = Math.min(GOAWAY_CODE_END - this.#goawayFilled, chunk.length - at);
        this.#goawayHead.set(chunk.subarray(at, at + take), this.#goawayFilled);
        this.#goawayFilled += take;
        this.#payloadLeft -= take;
        at += take;
        if (this.#goawayFilled < GOAWAY_CODE_END) break;
        this.#inGoaway = false;
        const g = this.#goawayHead;
        const code = ((g[4] << 24) | (g[5] << 16) | (g[6] << 8) | g[7]) >>> 0;
        if (code === 0) continue;
        this.#found = code;
        return code;
      }
      const skip = Math.min(this.#payloadLeft, chunk.length - at);
      this.#payloadLeft -= skip;
      at += skip;
    }
    return undefined;
  }
}
