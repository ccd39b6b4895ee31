/**
 * The grpc-js call object under a server stream or unary call, past the server's interceptors: the one that
 * holds the HTTP/2 stream. Reading the transport (outbound state, TLS peer, prefixed writes) needs it; grpc-js
 * offers no public way to it.
 *
 * @module
 */

/** Interceptors a chain may hold at most before the walk gives up. */
const MAX_INTERCEPTORS = 16;

/**
 * The innermost call of `call` (a grpc-js server stream or unary call): its `call`, and through each
 * interceptor's `nextCall` to the one that has the HTTP/2 `stream`; undefined when the shape differs.
 */
export function baseServerCall(call: unknown): Record<string, unknown> | undefined {
  // deno-lint-ignore no-explicit-any
  let inner = (call as any)?.call;
  for (let depth = 0; depth <= MAX_INTERCEPTORS; depth++) {
    if (inner === null || typeof inner !== "object") return undefined;
    if ("stream" in inner) return inner;
    inner = inner.nextCall;
  }
  return undefined;
}
