/**
 * The one grpc-js release whose private members this folder reads: the call under a server stream past its
 * interceptors (`call`, `nextCall`), that call's `sendMessage`, `sendStatus`, `checkCancelled`,
 * `maybeSendMetadata`, `handler.serialize`, `maxSendMessageSize` (and `callEventTracker`, there only with
 * channelz, which the servers turn off) and HTTP/2 `stream` (with its `session`, the session's `socket` and
 * `state`), its message `decoder` (`readState`, `readCompressFlag`, `readPartialMessage`, `write`), and
 * `Server.http2Servers`; on a client stream, the chain of calls down to the HTTP/2 call's `decoder` (`call`,
 * `nextCall`, `child`, `underlyingCalls[].call`). The send port, the prefixed writes, the peer guard and the
 * decoders' release rely on them;
 * grpc-js may move any of them in a patch release, so deno.json pins exactly this version and
 * `grpc_js_pin_test.ts` fails, naming it, when the installed one differs or its members are no longer where
 * they were.
 *
 * @module
 */

/** The pinned `@grpc/grpc-js` version; deno.json imports exactly this one. */
export const GRPC_JS_VERSION = "1.14.7";
