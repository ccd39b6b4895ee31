/**
 * Lets the runtime free a server stream that closed while its data was still queued. Deno 2.9.3's `node:http2`
 * keeps the request that shuts a stream's writable side in a strong global handle until the stream's queued data
 * has been sent; a stream that closes first (the peer cancelled it, or its connection went away) never sends
 * it, and the request (through its `handle`) keeps the stream, every byte queued on it and everything its
 * listeners reach, for the life of the process. Once the stream has closed, the request is detached from the
 * stream: the handle then holds a small object that reaches nothing, and the stream is collected as usual.
 *
 * Reaches into the runtime's stream object by the symbol described `kHandle`; where it is missing or has no
 * `shutdown` (another runtime or release), the stream is left as it is.
 *
 * @module
 */
import type { EventEmitter } from "node:events";
import { runtimeSymbol } from "./runtime_symbol.ts";

/** The runtime's request to end a stream's writable side, as its completion callback reads it. */
interface ShutdownRequest {
  handle?: unknown;
  callback?: () => void;
}

interface StreamHandle {
  shutdown?: (request: ShutdownRequest) => number;
}

/** Stands in for the stream's handle in a detached request: the completion reads nothing from it. */
const DETACHED_HANDLE = Object.freeze({});

function noop(): void {}

function detach(request: ShutdownRequest): void {
  request.handle = DETACHED_HANDLE;
  request.callback = noop;
}

/** Watches every stream `http2Server` opens and detaches its pending shutdown request once it has closed. */
export function releaseClosedStreams(http2Server: EventEmitter): void {
  // Every stream of one runtime carries the same symbol: looked up on the first stream only.
  let symbol: symbol | undefined;
  http2Server.on("stream", (stream: EventEmitter) => {
    symbol ??= runtimeSymbol(stream, "kHandle");
    const found = symbol === undefined ? undefined : (stream as unknown as Record<symbol, unknown>)[symbol];
    const handle = typeof found === "object" && found !== null ? found as StreamHandle : undefined;
    const shutdown = handle?.shutdown;
    if (handle === undefined || typeof shutdown !== "function") return;
    let pending: ShutdownRequest | undefined;
    let closed = false;
    // 0 means the runtime holds the request until the queued data is sent.
    handle.shutdown = function (request: ShutdownRequest): number {
      const result = shutdown.call(this, request);
      if (result === 0) {
        if (closed) detach(request);
        else pending = request;
      }
      return result;
    };
    stream.once("close", () => {
      closed = true;
      if (pending !== undefined) detach(pending);
      pending = undefined;
    });
  });
}
