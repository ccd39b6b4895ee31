/**
 * What the transport still holds for a call's peer, read from the HTTP/2 stream under a grpc-js server call.
 * A write callback alone cannot say a message left: some runtimes complete it as soon as the bytes are handed
 * to the native HTTP/2 session, even when the peer's flow-control window is closed. The peer's remaining
 * window says it on every runtime: zero means the peer has stopped granting credit and data is waiting.
 * A peer with a wide window lets the session take megabytes it has not yet written to the socket, so the
 * socket's own count of bytes written says when a response has really left.
 *
 * @module
 */
import { setImmediate } from "node:timers";
import { baseServerCall } from "./base_server_call.ts";
import { systemTimers, type Timers } from "../time/timers.ts";

/** The outbound side of a call's connection. */
export interface OutboundState {
  /** Bytes written to the stream and not yet taken by the HTTP/2 session. */
  readonly queuedBytes: number;
  /** Bytes the peer still lets the server send on the connection (HTTP/2 connection window). */
  readonly peerWindowBytes: number;
  /** Bytes the connection's socket has handed to the kernel; undefined when the runtime does not say. */
  readonly socketBytesWritten?: number;
}

interface Http2StreamLike {
  readonly writableLength?: number;
  readonly destroyed?: boolean;
  readonly session?: {
    readonly state?: { readonly remoteWindowSize?: number };
    readonly destroyed?: boolean;
    readonly socket?: { readonly bytesWritten?: number; readonly writableLength?: number };
  };
}

/** The HTTP/2 stream under a grpc-js server call; undefined when the shape differs. */
function http2StreamOf(call: unknown): Http2StreamLike | undefined {
  const stream = baseServerCall(call)?.stream;
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
  const socketBytesWritten = writtenBy(stream);
  return {
    queuedBytes: stream.writableLength ?? 0,
    peerWindowBytes: window,
    ...(socketBytesWritten === undefined ? {} : { socketBytesWritten }),
  };
}

/** Bytes the socket under `stream` has handed to the kernel; undefined when the runtime does not say. */
function writtenBy(stream: Http2StreamLike): number | undefined {
  const socket = stream.session?.socket;
  const written = socket?.bytesWritten;
  // Bytes still in the socket's own buffer are counted as written by some runtimes: not yet sent.
  return typeof written === "number" ? written - (socket?.writableLength ?? 0) : undefined;
}

/**
 * Bytes `call`'s connection has handed to the kernel so far; undefined when that cannot be read. Reads only
 * the socket: the session's state is a copy the runtime makes on each read, and this is asked on every send.
 */
export function socketBytesWritten(call: unknown): number | undefined {
  const stream = http2StreamOf(call);
  if (!stream || stream.destroyed || stream.session?.destroyed) return undefined;
  return writtenBy(stream);
}

/**
 * True when data for `call`'s peer is waiting: bytes queued, or fewer than `socketTarget` bytes written to the
 * socket (when given and readable), or else a closed connection window. A socket that has written the target
 * answers alone: with the connection window closed no DATA frame could have reached it, and the session's
 * state is a copy the runtime makes on each read, asked once per response.
 */
export function isOutboundStalled(call: unknown, socketTarget?: number): boolean {
  const stream = http2StreamOf(call);
  if (!stream || stream.destroyed || stream.session?.destroyed) return false;
  if ((stream.writableLength ?? 0) > 0) return true;
  const written = socketTarget === undefined ? undefined : writtenBy(stream);
  if (written !== undefined) return written < socketTarget!;
  const state = outboundState(call);
  return state !== undefined && state.peerWindowBytes <= 0;
}

/** The first and the longest wait of `whenOutboundFlushed` between two looks at a stalled call. */
export const OUTBOUND_POLL_MS = { first: 5, max: 200 } as const;

/**
 * Resolves once nothing written to `call` waits for its peer and its socket has written `socketTarget` bytes
 * (or the connection is gone); rejects with the signal's reason when `signal` aborts first. The first look
 * is after `firstWaitMs` (a sender pacing slices looks sooner than one waiting out a whole response). A
 * healthy peer grants credit within a round trip, so this resolves at once or after a few milliseconds; a
 * peer that stopped reading keeps it waiting, looked at less and less often (the wait doubles up to
 * `OUTBOUND_POLL_MS.max`) so thousands of stalled sends stay cheap.
 */
export function whenOutboundFlushed(
  call: unknown,
  signal?: AbortSignal,
  socketTarget?: number,
  firstWaitMs: number = OUTBOUND_POLL_MS.first,
  timers: Timers = systemTimers,
): Promise<void> {
  if (!isOutboundStalled(call, socketTarget)) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let timer: unknown;
    const stop = () => {
      timers.clearTimeout(timer);
      reject(signal?.reason);
    };
    const look = (waitMs: number) => {
      timer = timers.setTimeout(() => {
        if (isOutboundStalled(call, socketTarget)) return look(Math.min(waitMs * 2, OUTBOUND_POLL_MS.max));
        signal?.removeEventListener("abort", stop);
        resolve();
      }, waitMs);
    };
    if (signal?.aborted) return stop();
    signal?.addEventListener("abort", stop, { once: true });
    look(firstWaitMs);
  });
}

/** Turns of the event loop `whenOutboundLeft` looks on before it falls back to timers. */
const TURN_LOOKS = 4;

/**
 * Resolves as {@link whenOutboundFlushed} does, but looks first on the next few turns of the event loop (after
 * I/O), then on timers from 1 ms: a socket usually writes what it was handed within a turn or two, and a
 * first look at 5 ms held each of a push's permits that long, so a thousand 8 KiB responses through a hundred
 * permits waited out 50 ms more than they cost. Only a peer slow to read is then looked at less and less often.
 */
export function whenOutboundLeft(
  call: unknown,
  socketTarget?: number,
  signal?: AbortSignal,
  timers: Timers = systemTimers,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let turns = 0;
    const look = () => {
      if (signal?.aborted) return reject(signal.reason);
      if (!isOutboundStalled(call, socketTarget)) return resolve();
      if (++turns <= TURN_LOOKS) return void setImmediate(look);
      whenOutboundFlushed(call, signal, socketTarget, 1, timers).then(resolve, reject);
    };
    look();
  });
}
