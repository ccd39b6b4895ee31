/**
 * Lets a server call's message decoder drop the bytes it has delivered. grpc-js's `StreamDecoder` keeps, once a
 * message is whole, a one-byte view of the last chunk it read (`readCompressFlag`) and the views of every chunk
 * of that message (`readPartialMessage`), until the next message starts. Each view holds its whole chunk, and
 * the runtime gives every HTTP/2 DATA frame a buffer of its own: so an idle ADS stream held the frames of its
 * last request (a proxy's ACK, or a request naming thousands of resources) for as long as it stayed quiet, in
 * every proxy's stream at once. The message itself is a copy, handed on; nothing else reads these fields
 * before the decoder sets them again for the next message.
 *
 * A client stream's decoder (the agent's upstream ADS stream) does the same with each response: an unscoped
 * sidecar's last response can be megabytes, held until the next one.
 *
 * Reaches a server call's decoder through the call under the server's interceptors, and a client stream's
 * through its call chain down to the HTTP/2 call (grpc_js_pin.ts); where it is missing or shaped otherwise
 * (another grpc-js), the call is left as it is.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { EventEmitter } from "node:events";
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

/** Drops what `decoder` keeps of the message it last delivered, when it has not begun the next one. */
function releaseDelivered(decoder: DecoderState): void {
  if (decoder.readState !== NO_DATA) return;
  decoder.readCompressFlag = NO_FLAG;
  decoder.readPartialMessage = NO_PARTS;
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
    releaseDelivered(this);
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

/** Calls a client call chain may hold at most before the walk gives up. */
const MAX_CLIENT_CALLS = 16;

/**
 * The decoder of the HTTP/2 call under a grpc-js client stream, found through its chain of calls (interceptors'
 * `nextCall` and `call`, the resolving and load-balancing calls' `child`, the retrying call's latest
 * `underlyingCalls` entry); undefined before the call has reached a server, or when the shape differs.
 */
export function clientCallDecoder(stream: unknown): unknown {
  // deno-lint-ignore no-explicit-any
  let inner = (stream as any)?.call;
  for (let depth = 0; depth <= MAX_CLIENT_CALLS; depth++) {
    if (inner === null || typeof inner !== "object") return undefined;
    if ("decoder" in inner) return inner.decoder;
    const attempts = inner.underlyingCalls;
    inner = Array.isArray(attempts) ? attempts.at(-1)?.call : inner.nextCall ?? inner.call ?? inner.child;
  }
  return undefined;
}

/**
 * Makes the decoder under `stream` (a grpc-js client stream) let go of each response's chunks once the
 * response is delivered: looked up again at every response, since a retried call has a decoder of its own.
 */
export function releaseClientDecodedChunks(stream: EventEmitter): void {
  stream.on("data", () => {
    const decoder = clientCallDecoder(stream);
    if (isDecoder(decoder)) releaseDelivered(decoder);
  });
}
