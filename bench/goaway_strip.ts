/**
 * Removes GOAWAY frames from what a server-side HTTP/2 session reads: an experiment toward lifting the Deno pin
 * (docs/deno_pin.md). Deno 2.9.4–2.9.6 abort in nghttp2 while processing a GOAWAY a leaving client sent; a
 * client's GOAWAY only says it opens no more streams, and its connection ends next anyway. Wraps the session's
 * native handle's `receive`, which the runtime's `node:http2` feeds every chunk read from the socket (after
 * TLS): frames are followed by their 9-byte headers across chunks, after the client's 24-byte preface, and a
 * GOAWAY's header and payload are left out. Not used by the programs: only `goaway_survival.ts` runs it, and the
 * experiments of docs/deno_pin.md ("A way past the abort").
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { runtimeSymbol } from "../shared/grpc/runtime_symbol.ts";

const PREFACE_BYTES = 24;
const HEADER_BYTES = 9;
const GOAWAY = 7;

interface SessionHandle {
  receive(chunk: Uint8Array): unknown;
}

/**
 * Strips GOAWAY frames from `session`'s input from now on; false when the runtime's handle is not found. A
 * server session reads the client's 24-byte preface first; a client session (`prefaceBytes` 0) reads frames
 * from the start, and has its handle only once connected (call it on the session's `connect`).
 */
export function stripInboundGoaway(session: object, prefaceBytes = PREFACE_BYTES): boolean {
  const key = runtimeSymbol(session, "kHandle");
  const handle = key === undefined ? undefined : (session as Record<symbol, SessionHandle | undefined>)[key];
  if (handle === undefined || typeof handle.receive !== "function") return false;
  const receive = handle.receive;
  let prefaceLeft = prefaceBytes;
  let header = Buffer.alloc(0);
  let passLeft = 0;
  let dropLeft = 0;
  handle.receive = function (this: SessionHandle, chunk: Uint8Array) {
    const kept: Uint8Array[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (prefaceLeft > 0 || passLeft > 0) {
        const n = Math.min(prefaceLeft > 0 ? prefaceLeft : passLeft, chunk.length - at);
        kept.push(chunk.subarray(at, at + n));
        if (prefaceLeft > 0) prefaceLeft -= n;
        else passLeft -= n;
        at += n;
        continue;
      }
      if (dropLeft > 0) {
        const n = Math.min(dropLeft, chunk.length - at);
        dropLeft -= n;
        at += n;
        continue;
      }
      const piece = chunk.subarray(at, at + HEADER_BYTES - header.length);
      header = Buffer.concat([header, piece]);
      at += piece.length;
      if (header.length < HEADER_BYTES) break;
      const length = header.readUIntBE(0, 3);
      if (header[3] === GOAWAY) {
        dropLeft = length;
      } else {
        kept.push(header);
        passLeft = length;
      }
      header = Buffer.alloc(0);
    }
    if (kept.length === 0) return;
    return receive.call(this, kept.length === 1 ? kept[0] : Buffer.concat(kept));
  };
  return true;
}
