import type { Logger } from "../log/logger.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { Timers } from "../time/timers.ts";
import { formatAddress, type ListenAddress } from "./listen_address.ts";
import {
  type ConnectionGuard,
  type ConnectionLimits,
  DEFAULT_CONNECTION_LIMITS,
  startConnectionGuard,
} from "./connection_guard.ts";
import { PeerLogLimiter } from "../log/peer_log_limiter.ts";
import {
  type AdmittedRequest,
  DEFAULT_REQUEST_LIMITS,
  RequestAdmission,
  type RequestLimits,
  type RequestRefusal,
} from "./request_admission.ts";
import { discardBody } from "./request_limits.ts";
import { HttpError, jsonError } from "./router.ts";
import type { TrafficSink } from "../process/traffic_meter.ts";
import type { TlsKeyPair } from "./tls_termination.ts";

/** A running HTTP(S) server: the address it really bound (port 0 resolved) and how to stop it. */
export interface RunningServer {
  /** Name of the server, as used in its log lines. */
  readonly name: string;
  /** The address really bound, with port 0 resolved. */
  readonly address: ListenAddress;
  /** Base URL for clients: `http(s)://host:port`, with `0.0.0.0` replaced by `127.0.0.1`. */
  readonly url: string;
  /** Stops accepting connections and resolves once the server has finished. */
  shutdown(): Promise<void>;
}

/** A server {@link serveHttp} started: a {@link RunningServer} whose TLS certificate can be replaced. */
export interface RunningHttpServer extends RunningServer {
  /**
   * Serves `pair` to TLS handshakes from now on; open connections keep theirs.
   *
   * @throws {TypeError} when the server was started without TLS; {Error} when the pair cannot be used
   */
  updateTls(pair: TlsKeyPair): void;
}

/** The bounds of one listener, and where what they refuse is counted. */
export interface ServeLimits {
  /** Connection bounds (the guard's). */
  readonly connections?: ConnectionLimits;
  /** Request concurrency and body bytes in flight. */
  readonly requests?: RequestLimits;
  /** Counts refusals in `http_server_refused{server,reason}`; nothing is counted without it. */
  readonly metrics?: Metrics;
  /** Times the connection bounds; default the runtime's. */
  readonly connectionTimers?: Timers;
  /** Told the body bytes of every admitted request once it ends (a request without a body: nothing). */
  readonly traffic?: TrafficSink;
}

/** How much of an unread body is dropped before answering, and for how long, before it is cancelled instead. */
const DRAIN_BYTES = 64 * 1024;
const DRAIN_MS = 1_000;
/** Seconds a refused client is told to wait (`retry-after`). */
const RETRY_AFTER_SECONDS = 1;

/**
 * Starts serving `handler` on `addr`, logs the bound address, and resolves once listening. An address that
 * cannot be bound throws an error naming the server, the address and `flag` (the setting that chose it).
 * Requests past `limits.requests` are answered 503 (the listener's bounds) or 429 (the client's own) with
 * `retry-after`, before their body is read; each refusal is counted and logged at most once a minute per
 * client. A body the handler left unread is dropped (up to 64 KiB) before the answer goes out.
 */
export async function serveHttp(
  name: string,
  addr: ListenAddress,
  handler: (request: Request) => Response | Promise<Response>,
  log: Logger,
  tls?: TlsKeyPair,
  flag?: string,
  limits: ServeLimits = {},
): Promise<RunningHttpServer> {
  const controller = new AbortController();
  let bound: ListenAddress | undefined;
  const listening = Promise.withResolvers<void>();
  const refusals = limits.metrics?.counter("http_server_refused");
  const throttle = new PeerLogLimiter();
  const requestLimits = limits.requests ?? DEFAULT_REQUEST_LIMITS;
  const admission = new RequestAdmission(requestLimits);
  const refuse = (reason: RequestRefusal, peer: string): Response => {
    refusals?.inc({ server: name, reason });
    const own = reason.startsWith("peer_");
    const passedOver = throttle.take(peer);
    if (passedOver !== undefined) {
      log.warn(`${name}: request refused, ${REFUSAL_TEXT[reason]}`, { peer, reason, passedOver });
    }
    const response = jsonError(own ? 429 : 503, `Too many requests in progress: ${REFUSAL_TEXT[reason]}`);
    response.headers.set("retry-after", String(RETRY_AFTER_SECONDS));
    return response;
  };
  // Deno.serve has no handshake, header or idle timeouts: it listens on loopback behind a guard that has them,
  // and the guard tells which client each relayed connection belongs to. The guard ends TLS (so it can bound
  // each request as on a plain connection) and relays HTTP/1.1 or HTTP/2 in the clear to this server.
  let guard: ConnectionGuard | undefined;
  const serveRequest = async (request: Request, info: Deno.ServeHandlerInfo<Deno.Addr>) => {
    let peer: Deno.NetAddr | undefined;
    if (info.remoteAddr.transport === "tcp") {
      peer = relayedPeer(info.remoteAddr as Deno.NetAddr, (port) => guard?.peerOf(port));
      PEERS.set(request, peer);
    }
    const key = peer?.hostname ?? "in-process";
    // A declared length is reserved up front; a body of unknown length, or one larger than a client may ever
    // hold (the handler refuses it with its own status), is counted as it arrives instead.
    const declared = Number(request.headers.get("content-length") ?? "NaN");
    const reserved = Number.isSafeInteger(declared) && declared <= requestLimits.maxBodyBytesPerPeer &&
      declared <= requestLimits.maxBodyBytes;
    const admitted = admission.admit(key, reserved ? declared : 0);
    if (typeof admitted === "string") {
      await discardBody(request, DRAIN_BYTES, DRAIN_MS);
      return refuse(admitted, key);
    }
    try {
      const counted = request.body && !reserved ? countedRequest(request, admitted, peer) : request;
      const response = await handler(counted);
      await discardBody(counted, DRAIN_BYTES, DRAIN_MS);
      return response;
    } finally {
      const bytes = admitted.release();
      if (bytes > 0) limits.traffic?.received(bytes);
    }
  };
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: controller.signal,
    onListen: ({ hostname, port }) => {
      bound = { hostname, port };
      listening.resolve();
    },
    onError: (error) => {
      log.error(`${name} handler failed`, { error: (error as Error)?.message ?? String(error) });
      return new Response(JSON.stringify({ error: "internal error" }), { status: 500 });
    },
  }, serveRequest);
  await listening.promise;
  try {
    guard = startConnectionGuard({
      listen: addr,
      backend: { transport: "tcp", hostname: bound!.hostname, port: bound!.port },
      ...(tls && { tls }),
      limits: limits.connections ?? DEFAULT_CONNECTION_LIMITS,
      log,
      name,
      logThrottle: throttle,
      ...(limits.connectionTimers && { timers: limits.connectionTimers }),
      onRefused: (reason) => refusals?.inc({ server: name, reason }),
    });
  } catch (error) {
    controller.abort();
    await server.finished;
    const where = `${formatAddress(addr.hostname, addr.port)}${flag ? ` (${flag})` : ""}`;
    const reason = error instanceof Deno.errors.AddrInUse
      ? "the address is already in use; choose another port or stop the program using it"
      : (error as Error).message;
    throw new Error(`${name} cannot listen on ${where}: ${reason}`, { cause: error });
  }
  const running = guard;
  const address = { hostname: running.address.hostname, port: running.address.port };
  const url = `${tls ? "https" : "http"}://${
    formatAddress(address.hostname === "0.0.0.0" ? "127.0.0.1" : address.hostname, address.port)
  }`;
  log.info(`${name} listening`, { address: formatAddress(address.hostname, address.port), url });
  return {
    name,
    address,
    url,
    updateTls: (pair) => running.updateTls(pair),
    async shutdown() {
      await running.close();
      controller.abort();
      await server.finished;
    },
  };
}

const PEERS = new WeakMap<Request, Deno.NetAddr>();

const REFUSAL_TEXT: Readonly<Record<RequestRefusal, string>> = {
  requests: "the server is at its limit of requests in progress",
  body_bytes: "the server holds as many request body bytes as it allows",
  peer_requests: "this client is at its limit of requests in progress",
  peer_body_bytes: "this client's request bodies in progress are at their limit",
};

/**
 * A client that reached the inner server without the guard knowing it (the lookup missed). It is not on
 * loopback, so loopback-only paths refuse it.
 */
export const UNKNOWN_PEER: Deno.NetAddr = Object.freeze({ transport: "tcp", hostname: "unknown", port: 0 });

/**
 * The client behind a connection the inner server accepted from `relayed`: the guard's record of it, or
 * {@link UNKNOWN_PEER} when the guard has none, never the relay's own loopback address.
 */
export function relayedPeer(
  relayed: Deno.NetAddr,
  lookup: (port: number) => Deno.NetAddr | undefined,
): Deno.NetAddr {
  return lookup(relayed.port) ?? UNKNOWN_PEER;
}

/** `request` with its body counted against the admitted budget as it arrives; past it, reading fails. */
function countedRequest(
  request: Request,
  admitted: AdmittedRequest,
  peer: Deno.NetAddr | undefined,
): Request {
  const body = request.body!.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const over = admitted.take(chunk.byteLength);
        if (over === undefined) return controller.enqueue(chunk);
        controller.error(
          new HttpError(over.startsWith("peer_") ? 429 : 503, `Request body refused: ${REFUSAL_TEXT[over]}`),
        );
      },
    }),
  );
  const counted = new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body,
    signal: request.signal,
  });
  if (peer) PEERS.set(counted, peer);
  return counted;
}

/** The TCP peer a request came from, when it arrived through {@link serveHttp}; undefined in-process. */
export function peerAddress(request: Request): Deno.NetAddr | undefined {
  return PEERS.get(request);
}

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback addresses. */
export function isLoopbackAddress(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "::1" || /^(::ffff:)?127\./.test(host);
}

/**
 * Wraps `handler` so it answers loopback callers only, unless `allowRemote`; others get 403 naming the
 * variable that opens it. Requests that did not arrive over TCP (in-process calls) are served.
 */
export function loopbackOnly(
  handler: (request: Request) => Response | Promise<Response>,
  allowRemote: boolean,
): (request: Request) => Response | Promise<Response> {
  if (allowRemote) return handler;
  return (request) => {
    const peer = peerAddress(request);
    if (peer === undefined || isLoopbackAddress(peer.hostname)) return handler(request);
    return new Response(
      JSON.stringify({
        error: `${
          new URL(request.url).pathname.length <= 100 ? new URL(request.url).pathname : "this path"
        } reveals configuration and answers loopback callers only; set ${REMOTE_DEBUG_VARIABLE}=true to allow others`,
      }) + "\n",
      { status: 403, headers: { "content-type": "application/json" } },
    );
  };
}

/** The variable that lets non-loopback callers read the sensitive debug paths. */
export const REMOTE_DEBUG_VARIABLE = "DEBUG_REMOTE_ACCESS";
