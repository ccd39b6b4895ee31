/**
 * gRPC's length-prefixed message framing: on an HTTP/2 stream every message follows 5 bytes, a compressed
 * flag and its length as a big-endian uint32. A message encoded with room for the prefix in front of it can
 * be written as one frame without copying it into a new buffer (which grpc-js does for every message it
 * sends: a full-view push copied 2.4 GB so).
 *
 * @module
 */

/** Bytes of the prefix: the compressed flag (1) and the length (4). */
export const GRPC_PREFIX_BYTES = 5;

/** The largest length the prefix can hold. */
const MAX_LENGTH = 0xffff_ffff;

/**
 * Writes an uncompressed message's prefix into `buffer` at `offset`, for a message of `length` bytes that
 * starts right after it.
 *
 * @throws {RangeError} when `length` does not fit the prefix or the prefix does not fit `buffer`
 */
export function writeGrpcPrefix(buffer: Uint8Array, offset: number, length: number): void {
  if (!Number.isInteger(length) || length < 0 || length > MAX_LENGTH) {
    throw new RangeError(`Invalid gRPC message length ${length}: expected an integer in 0..${MAX_LENGTH}`);
  }
  if (offset < 0 || offset + GRPC_PREFIX_BYTES > buffer.length) {
    throw new RangeError(
      `Invalid gRPC prefix offset ${offset}: expected 0..${buffer.length - GRPC_PREFIX_BYTES}`,
    );
  }
  buffer[offset] = 0;
  new DataView(buffer.buffer, buffer.byteOffset + offset, GRPC_PREFIX_BYTES).setUint32(1, length);
}

/**
 * The message with its prefix, as one view of the same memory, when the 5 bytes in front of `message` in
 * its buffer are its uncompressed prefix; otherwise undefined. The frame is then byte for byte what a
 * gRPC library writes for `message`, whoever made the buffer.
 */
export function grpcFrameOf(message: Uint8Array): Uint8Array | undefined {
  const start = message.byteOffset - GRPC_PREFIX_BYTES;
  if (start < 0) return undefined;
  const frame = new Uint8Array(message.buffer, start, message.length + GRPC_PREFIX_BYTES);
  if (frame[0] !== 0) return undefined;
  const length = ((frame[1] << 24) >>> 0) + (frame[2] << 16) + (frame[3] << 8) + frame[4];
  return length === message.length ? frame : undefined;
}
