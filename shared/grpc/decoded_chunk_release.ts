/**
 * Lets a server call's message decoder drop the bytes it has delivered. grpc-js's `StreamDecoder` keeps, once a
 * message is whole, a one-byte view of the last chunk it read (`readCompressFlag`) and the views of every chunk
 * of that message (`readPartialMessage`), until the next message starts. Each view holds its whole chunk, and
 * the runtime gives every HTTP/2 DATA frame a buffer of its own: so an idle ADS stream held the frames of its
 * last request (a proxy's ACK, or a request naming thousands of resources) for as long as it stayed quiet, in
 * every proxy's stream at once. The message itself is a copy, handed on; nothing else reads these fields
 * before the decoder sets them again for the next message.
 *
 * Reaches the decoder through the call under the server's interceptors (grpc_js_pin.ts); where it is missing
 * or shaped otherwise (another grpc-js), the call is left as it is.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { baseServerCall } from "./base_server_call.ts";

/** The decoder's state between messages: the next byte it reads is a message's compression flag. */
const NO_DATA = 0;

/** Stands in for the last compression flag read: the decoder replaces it before it reads it again. */
const NO_FLAG = Buffer.alloc(1);

/** Stands in for the last message's chunks: the decoder replaces it before it adds to it again. */
const NO_PARTS: readonly Buffer[] = Object.freeze([]);

/** The members of grpc-js's `StreamDecoder` this reads and replaces. */
interface DecoderState {
  readState: number;
  readCompressFlag: Buffer;
  readPartialMessage: readonly Buffer[];
  write(data: Buffer): Buffer[];
}

function isDecoder(value: unknown): value is DecoderState {
  const decoder = value as Partial<DecoderState> | null;
  return typeof decoder?.write === "function" && typeof decoder.readState === "number" &&
    Buffer.isBuffer(decoder.readCompressFlag) && Array.isArray(decoder.readPartialMessage);
}

/**
 * Makes the decoder under `call` (a grpc-js server call) let go of a message's chunks once the message is
 * whole. True when it found the decoder.
 */
export function releaseDecodedChunks(call: unknown): boolean {
  const decoder = baseServerCall(call)?.decoder;
  if (!isDecoder(decoder)) return false;
  const write = decoder.write;
  decoder.write = function (data: Buffer): Buffer[] {
    const messages = write.call(this, data);
    if (this.readState === NO_DATA) {
      this.readCompressFlag = NO_FLAG;
      this.readPartialMessage = NO_PARTS;
    }
    return messages;
  };
  return true;
}

/**
 * `implementation` with every handler first calling {@link releaseDecodedChunks} on its call (the first
 * argument of every grpc-js server handler).
 */
export function releasingDecodedChunks<I extends Record<string, unknown>>(implementation: I): I {
  const wrapped: Record<string, unknown> = {};
  for (const [name, handler] of Object.entries(implementation)) {
    wrapped[name] = typeof handler !== "function" ? handler : function (this: unknown, ...args: unknown[]) {
      releaseDecodedChunks(args[0]);
      return handler.apply(this, args);
    };
  }
  return wrapped as I;
}
