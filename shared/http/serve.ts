import type { Logger } from "../log/logger.ts";
import { formatAddress, type ListenAddress } from "./listen_address.ts";
import {
  type ConnectionGuard,
  type ConnectionLimits,
  DEFAULT_CONNECTION_LIMITS,
  startConnectionGuard,
} from "./connection_guard.ts";

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

/** TLS material for an HTTPS server, as PEM text. */
export interface TlsPem {
  /** PEM certificate chain, leaf first. */
  readonly cert: string;
  /** PEM private key of the leaf certificate. */
  readonly key: string;
}

/**
 * Starts serving `handler` on `addr`, logs the bound address, and resolves once listening. An address that
 * cannot be bound throws an error naming the server, the address and `flag` (the setting that chose it).
 */
export async function serveHttp(
  name: string,
  addr: ListenAddress,
  handler: (request: Request) => Response | Promise<Response>,
  log: Logger,
  tls?: TlsPem,
  flag?: string,
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
): Promise<RunningServer> {
  const controller = new AbortController();
  let bound: ListenAddress | undefined;
  const listening = Promise.withResolvers<void>();
  // Deno.serve has no handshake, header or idle timeouts: it listens on loopback behind a guard that has them,
  // and the guard tells which client each relayed connection belongs to.
  let guard: ConnectionGuard | undefined;
  const serveRequest = (request: Request, info: Deno.ServeHandlerInfo<Deno.Addr>) => {
    if (info.remoteAddr.transport === "tcp") {
      const relayed = info.remoteAddr as Deno.NetAddr;
      PEERS.set(request, guard?.peerOf(relayed.port) ?? relayed);
    }
    return handler(request);
  };
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: controller.signal,
    ...(tls ? { cert: tls.cert, key: tls.key } : {}),
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
      tls: tls !== undefined,
      limits,
      log,
      name,
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
    async shutdown() {
      await running.close();
      controller.abort();
      await server.finished;
    },
  };
}

const PEERS = new WeakMap<Request, Deno.NetAddr>();

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
