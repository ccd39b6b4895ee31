/**
 * Protobuf wire-format primitives for hand-framed messages: sizes are computed first so a message is written
 * into one exactly sized buffer with no intermediate copies.
 *
 * @module
 */
import { GRPC_PREFIX_BYTES, writeGrpcPrefix } from "./grpc_prefix.ts";

/** Wire type 0: varint. */
export const VARINT = 0;
/** Wire type 2: length-delimited (strings, bytes, embedded messages, packed repeated). */
export const LEN = 2;

const utf8 = new TextEncoder();

/** Encodes a string as UTF-8. */
export function utf8Bytes(text: string): Uint8Array {
  return utf8.encode(text);
}

/** Number of bytes a varint takes; `value` is a non-negative integer below 2^64 (bigint for large values). */
export function varintSize(value: number | bigint): number {
  // Lengths and tags are numbers: sized by comparison, as a BigInt per field was a visible share of framing.
  if (typeof value === "number" && value <= Number.MAX_SAFE_INTEGER) {
    let size = 1;
    for (let limit = 0x80; value >= limit; limit *= 0x80) size++;
    return size;
  }
  let v = BigInt(value);
  let size = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    size++;
  }
  return size;
}

/** Number of bytes a length-delimited field takes: tag, length prefix and payload. */
export function lenFieldSize(field: number, payloadLength: number): number {
  return varintSize(field << 3) + varintSize(payloadLength) + payloadLength;
}

/** Number of bytes a varint field takes, tag included. */
export function varintFieldSize(field: number, value: number | bigint): number {
  return varintSize(field << 3) + varintSize(value);
}

/** Options of a {@link WireWriter}. */
export interface WireWriterOptions {
  /**
   * Puts gRPC's message prefix in front of the message, in the same buffer, so the transport can send it
   * without a copy (see `grpc_prefix.ts`); the finished message is still the message alone.
   */
  readonly grpcPrefix?: boolean;
}

/** Writes into a pre-sized buffer; the caller guarantees the buffer is exactly as large as what it writes. */
export class WireWriter {
  /** The whole buffer, gRPC prefix included when asked for. */
  readonly bytes: Uint8Array;
  /** Where the message starts in `bytes`. */
  readonly #start: number;
  pos: number;

  constructor(size: number, options: WireWriterOptions = {}) {
    this.#start = options.grpcPrefix === true ? GRPC_PREFIX_BYTES : 0;
    this.bytes = new Uint8Array(this.#start + size);
    if (this.#start > 0) writeGrpcPrefix(this.bytes, 0, size);
    this.pos = this.#start;
  }

  /** Writes a non-negative integer as a varint. */
  varint(value: number | bigint): this {
    if (typeof value === "number" && value <= 0x7fffffff) {
      let v = value;
      while (v >= 0x80) {
        this.bytes[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      this.bytes[this.pos++] = v;
      return this;
    }
    let v = BigInt(value);
    while (v >= 0x80n) {
      this.bytes[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.bytes[this.pos++] = Number(v);
    return this;
  }

  /** Writes a field tag. */
  tag(field: number, wireType: number): this {
    return this.varint((field << 3) | wireType);
  }

  /** Writes a length-delimited field whose payload is `payload`. */
  lenField(field: number, payload: Uint8Array): this {
    return this.tag(field, LEN).varint(payload.length).raw(payload);
  }

  /** Writes the tag and length prefix of a length-delimited field whose payload the caller writes next. */
  lenHeader(field: number, payloadLength: number): this {
    return this.tag(field, LEN).varint(payloadLength);
  }

  /** Writes bytes that are already wire format (whole fields). */
  raw(bytes: Uint8Array): this {
    this.bytes.set(bytes, this.pos);
    this.pos += bytes.length;
    return this;
  }

  /** Writes a varint field. */
  varintField(field: number, value: number | bigint): this {
    return this.tag(field, VARINT).varint(value);
  }

  /** Returns the written message (without any prefix), asserting the size computed up front was exact. */
  finish(): Uint8Array {
    if (this.pos !== this.bytes.length) {
      throw new RangeError(
        `Framing wrote ${this.pos - this.#start} bytes into a buffer sized ${
          this.bytes.length - this.#start
        }; sizes disagree`,
      );
    }
    return this.#start === 0 ? this.bytes : this.bytes.subarray(this.#start);
  }
}
