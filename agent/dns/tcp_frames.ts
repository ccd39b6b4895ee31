/**
 * DNS over TCP framing (RFC 1035 §4.2.2): each message behind its 16-bit length. The reader never holds more
 * than one unfinished message, 65,537 bytes at most.
 *
 * @module
 */
import { Buffer } from "node:buffer";

/** Prefixes a message with its length. */
export function tcpFrame(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(2 + message.length);
  frame.writeUInt16BE(message.length, 0);
  frame.set(message, 2);
  return frame;
}

/** Splits a TCP byte stream into the messages in it. */
export class TcpFrameReader {
  #buffered: Buffer = Buffer.alloc(0);

  /** Takes the next chunk; returns the messages it completed. */
  push(chunk: Uint8Array): Uint8Array[] {
    this.#buffered = this.#buffered.length === 0
      ? Buffer.from(chunk)
      : Buffer.concat([this.#buffered, chunk]);
    const out: Uint8Array[] = [];
    while (this.#buffered.length >= 2) {
      const length = this.#buffered.readUInt16BE(0);
      if (this.#buffered.length < 2 + length) break;
      out.push(new Uint8Array(this.#buffered.subarray(2, 2 + length)));
      this.#buffered = this.#buffered.subarray(2 + length);
    }
    return out;
  }
}
