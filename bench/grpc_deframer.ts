/**
 * Reads gRPC length-prefixed messages out of a stream's DATA payloads, which may cut a message anywhere.
 *
 * @module
 */
import { GRPC_PREFIX_BYTES } from "../proto/grpc_prefix.ts";

/** A message the deframer refuses: compressed (none was offered) or longer than its bound. */
export class GrpcFramingError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = "GrpcFramingError";
  }
}

/** Collects the bytes of one stream's messages; every message handed out is its own copy. */
export class GrpcDeframer {
  #held: Uint8Array = new Uint8Array(0);

  constructor(readonly maxMessageBytes: number) {}

  /**
   * Feeds one DATA payload and calls `onMessage` with every message it completes, in order.
   *
   * @throws {GrpcFramingError} on a compressed message or one over `maxMessageBytes`
   */
  push(payload: Uint8Array, onMessage: (message: Uint8Array) => void): void {
    let data = payload;
    if (this.#held.length > 0) {
      data = new Uint8Array(this.#held.length + payload.length);
      data.set(this.#held);
      data.set(payload, this.#held.length);
    }
    let at = 0;
    while (data.length - at >= GRPC_PREFIX_BYTES) {
      if (data[at] !== 0) {
        throw new GrpcFramingError(`Invalid gRPC message flag ${data[at]}: expected 0 (no compression)`);
      }
      const length = (data[at + 1] * 0x100_0000) + (data[at + 2] << 16) + (data[at + 3] << 8) + data[at + 4];
      if (length > this.maxMessageBytes) {
        throw new GrpcFramingError(
          `Invalid gRPC message length ${length}: expected at most ${this.maxMessageBytes}`,
        );
      }
      const end = at + GRPC_PREFIX_BYTES + length;
      if (end > data.length) break;
      onMessage(data.slice(at + GRPC_PREFIX_BYTES, end));
      at = end;
    }
    this.#held = at === data.length ? new Uint8Array(0) : data.slice(at);
  }

  /** True while part of a message has arrived and the rest has not. */
  get partial(): boolean {
    return this.#held.length > 0;
  }
}
