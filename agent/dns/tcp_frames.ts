/**
 * DNS over TCP framing (RFC 1035 §4.2.2): each message behind its 16-bit length. The reader keeps the chunks it
 * was given as they came and copies each byte once, into the message it belongs to, whatever the chunks' sizes:
 * a client sending a message a byte at a time costs as much as one sending it whole.
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
  /** Chunks not yet read whole, oldest first, from `#first`; that one starts `#head` bytes in. */
  #chunks: Uint8Array[] = [];
  #first = 0;
  #head = 0;
  #buffered = 0;

  /** Bytes taken and not yet returned in a message. */
  get buffered(): number {
    return this.#buffered;
  }

  /** Takes the next chunk; returns the messages it completed. */
  push(chunk: Uint8Array): Uint8Array[] {
    this.append(chunk);
    const out: Uint8Array[] = [];
    for (let message = this.next(); message !== undefined; message = this.next()) out.push(message);
    return out;
  }

  /** Takes the next chunk without reading messages from it (see {@link next}). */
  append(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
  }

  /** The next whole message taken, or undefined until its last byte has come. */
  next(): Uint8Array | undefined {
    if (this.#buffered < 2) return undefined;
    const length = (this.#byteAt(0) << 8) | this.#byteAt(1);
    if (this.#buffered < 2 + length) return undefined;
    this.#skip(2);
    const message = new Uint8Array(length);
    let filled = 0;
    while (filled < length) {
      const first = this.#chunks[this.#first];
      const take = Math.min(length - filled, first.length - this.#head);
      message.set(first.subarray(this.#head, this.#head + take), filled);
      filled += take;
      this.#skip(take);
    }
    return message;
  }

  /** The byte `index` bytes past the first unread one; the caller knows it is there. */
  #byteAt(index: number): number {
    let at = this.#head + index;
    for (let i = this.#first; i < this.#chunks.length; i++) {
      if (at < this.#chunks[i].length) return this.#chunks[i][at];
      at -= this.#chunks[i].length;
    }
    throw new RangeError(`No byte ${index} buffered`);
  }

  /** Drops `count` unread bytes, and the chunks they empty. */
  #skip(count: number): void {
    this.#buffered -= count;
    let left = count;
    while (left > 0) {
      const room = this.#chunks[this.#first].length - this.#head;
      if (left < room) {
        this.#head += left;
        break;
      }
      left -= room;
      this.#first++;
      this.#head = 0;
    }
    // Read chunks are let go in one step once they are half the list: an array's shift moves every other.
    if (this.#first * 2 >= this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#first);
      this.#first = 0;
    }
  }
}
