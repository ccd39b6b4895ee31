/**
 * What the transport still holds for a call's peer, read from the HTTP/2 stream under a grpc-js server call.
 * A write callback alone cannot say a message left: some runtimes complete it as soon as the bytes are handed
 * to the native HTTP/2 session, even when the peer's flow-control window is closed. The peer's remaining
 * window says it on every runtime: zero means the peer has stopped granting credit and data is waiting.
 *
 * @module
 */

/** The outbound side of a call's connection. */
export interface OutboundState {
  /** Bytes written to the stream and not yet taken by the HTTP/2 session. */
  readonly queuedBytes: number;
  /** Bytes the peer still lets the server send on the connection (HTTP/2 connection window). */
  readonly peerWindowBytes: number;
}

interface Http2StreamLike {
  readonly writableLength?: number;
  readonly destroyed?: boolean;
  readonly session?: {
    readonly state?: { readonly remoteWindowSize?: number };
    readonly destroyed?: boolean;
  };
}

/** The HTTP/2 stream under a grpc-js server call without interceptors; undefined when the shape differs. */
function http2StreamOf(call: unknown): Http2StreamLike | undefined {
  // deno-lint-ignore no-explicit-any
  const stream = (call as any)?.call?.stream;
  return stream && typeof stream === "object" ? stream as Http2StreamLike : undefined;
}

/** The outbound state of `call`'s connection; undefined when it is closed or cannot be read. */
export function outboundState(call: unknown): OutboundState | undefined {
  const stream = http2StreamOf(call);
  if (!stream || stream.destroyed || stream.session?.destroyed) return undefined;
  let window: number | undefined;
  try {
    window = stream.session?.state?.remoteWindowSize;
  } catch {
    return undefined;
  }
  if (typeof window !== "number") return undefined;
  return { queuedBytes: stream.writableLength ?? 0, peerWindowBytes: window };
}

/** True when data for `call`'s peer is waiting: bytes queued, or a closed connection window. */
export function isOutboundStalled(call: unknown): boolean {
  const state = outboundState(call);
  return state !== undefined && (state.queuedBytes > 0 || state.peerWindowBytes <= 0);
}

/** How often `whenOutboundFlushed` looks again while the peer grants no credit. */
export const OUTBOUND_POLL_MS = 20;

/**
 * Resolves once nothing written to `call` waits for its peer (or the connection is gone); rejects with the
 * signal's reason when `signal` aborts first. A healthy peer grants credit within a round trip, so this
 * resolves at once or after one poll; a peer that stopped reading keeps it waiting.
 */
export function whenOutboundFlushed(call: unknown, signal?: AbortSignal): Promise<void> {
  if (!isOutboundStalled(call)) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const stop = () => {
      clearInterval(timer);
      reject(signal?.reason);
    };
    const timer = setInterval(() => {
      if (isOutboundStalled(call)) return;
      clearInterval(timer);
      signal?.removeEventListener("abort", stop);
      resolve();
    }, OUTBOUND_POLL_MS);
    if (signal?.aborted) stop();
    else signal?.addEventListener("abort", stop, { once: true });
  });
}
