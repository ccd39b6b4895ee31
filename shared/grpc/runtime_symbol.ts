/**
 * Finds a symbol the runtime's `node:http2` keys its internals by (a stream's or session's native handle, a
 * handle's owner), by the symbol's description: the runtime does not export them. The workarounds for Deno
 * 2.9.3's leaks (`closed_stream_release.ts`, `closed_session_release.ts`) reach in through it.
 *
 * @module
 */

/** The symbol described `description` among `target`'s own, or undefined in a runtime that has none. */
export function runtimeSymbol(target: object, description: string): symbol | undefined {
  return Object.getOwnPropertySymbols(target).find((s) => s.description === description);
}
