/**
 * Lets a grpc-js server call send messages that carry their own gRPC prefix (`proto/grpc_prefix.ts`) without
 * a copy. grpc-js serialises every outgoing message into a new buffer 5 bytes longer and copies the message
 * in: for a response framed once and shared by a thousand proxies, that is a thousand copies of megabytes
 * each, all of it garbage the moment the transport has taken it.
 *
 * The call's serialisation is wrapped: a message whose prefix is in front of it goes out as that one view of
 * the same memory — byte for byte what grpc-js would have written — and any other message goes through
 * grpc-js as before. Size limits, metadata, status and write errors stay grpc-js's.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { grpcFrameOf } from "../../proto/grpc_prefix.ts";

type Serialize = (value: unknown) => Buffer;

/** The grpc-js call under a server stream (no interceptors), as far as this module reads it. */
interface InnerCall {
  serializeMessage?: Serialize;
  readonly handler?: { readonly serialize?: Serialize };
}

/**
 * Makes `call` (a grpc-js server stream) send prefixed messages without copying them; returns false, and
 * changes nothing, when the call is not shaped as this grpc-js version's (messages are then copied as
 * before, still correct).
 */
export function sendPrefixedWithoutCopy(call: unknown): boolean {
  // deno-lint-ignore no-explicit-any
  const inner = (call as any)?.call as InnerCall | undefined;
  const serializeMessage = inner?.serializeMessage;
  const serialize = inner?.handler?.serialize;
  if (inner === undefined || typeof serializeMessage !== "function" || typeof serialize !== "function") {
    return false;
  }
  inner.serializeMessage = function (this: InnerCall, value: unknown): Buffer {
    // The method's own serialiser first, as grpc-js does: for bytes it returns them, or a view of them.
    const message = serialize(value);
    const frame = message instanceof Uint8Array ? grpcFrameOf(message) : undefined;
    if (frame === undefined) return serializeMessage.call(this, value);
    return Buffer.from(frame.buffer, frame.byteOffset, frame.length);
  };
  return true;
}
