/**
 * Lets the runtime collect a server session's JavaScript side once it has closed. Deno 2.9.3's `node:http2`
 * never frees a session's native state (it has no destructor; upstream's fix, denoland/deno `10344fa`, is only
 * in the releases that die in nghttp2, docs/deno_pin.md), and that state holds the session's native handle
 * object in a global handle. The handle reaches the session object (under the symbol described `ownerSymbol`)
 * and the callbacks the runtime set on it, which close over the session and its socket: so every session ever
 * closed, its socket and everything their listeners reach stayed in the V8 heap for good. Once the session has
 * closed, the handle is pointed at a stand-in that reads as destroyed and its callbacks at a no-op; the session
 * is then collected as usual. The native state itself cannot be freed from here.
 *
 * Reaches into the runtime's session by the symbol described `kHandle`; where it or the handle's owner symbol
 * is missing (another runtime or release), the session is left as it is.
 *
 * @module
 */
import type { EventEmitter } from "node:events";
import { runtimeSymbol } from "./runtime_symbol.ts";

/**
 * Stands in for a closed session on its handle: every runtime callback that reads the owner returns at once
 * when it reads as destroyed, and one that destroys it does nothing.
 */
const DETACHED_OWNER = Object.freeze({ destroyed: true, closed: true, destroy(): void {} });

function noop(): void {}

/** Points `handle` away from its session: its owner at the stand-in, its callbacks at a no-op. */
function detach(handle: Record<string | symbol, unknown>, owner: symbol): void {
  handle[owner] = DETACHED_OWNER;
  for (const key of Object.keys(handle)) {
    if (typeof handle[key] === "function") handle[key] = noop;
  }
}

/** Watches every session `http2Server` opens and detaches its native handle from it once it has closed. */
export function releaseClosedSessions(http2Server: EventEmitter): void {
  // One runtime's sessions and handles all carry the same symbols: looked up on the first that has them.
  let handleKey: symbol | undefined;
  let ownerKey: symbol | undefined;
  http2Server.on("session", (session: EventEmitter) => {
    handleKey ??= runtimeSymbol(session, "kHandle");
    const found = handleKey === undefined
      ? undefined
      : (session as unknown as Record<symbol, unknown>)[handleKey];
    if (typeof found !== "object" || found === null) return;
    const handle = found as Record<string | symbol, unknown>;
    ownerKey ??= runtimeSymbol(handle, "ownerSymbol");
    const owner = ownerKey;
    if (owner === undefined || handle[owner] !== session) return;
    session.once("close", () => detach(handle, owner));
  });
}
