/**
 * The one gRPC server every service of both programs runs on: it binds a TCP address or a Unix socket, with
 * optional TLS and client certificates, applies keepalive and per-connection limits, and shuts down gracefully
 * then by force.
 *
 * @module
 */
import net from "node:net";
import type { EventEmitter } from "node:events";
import * as grpc from "@grpc/grpc-js";
import { formatAddress, parseListenAddress } from "../http/listen_address.ts";
import type { Logger } from "../log/logger.ts";
import {
  grpcChannelOptions,
  type GrpcKeepalive,
  type GrpcLimits,
  MAX_TIMER_MS,
} from "./grpc_channel_options.ts";
import { type GrpcTls, serverCredentials } from "./server_credentials.ts";
import { guardHttp2Server, type PeerDrop, type PeerDropReason } from "./peer_guard.ts";
import { releaseClosedStreams } from "./closed_stream_release.ts";
import { releaseClosedSessions } from "./closed_session_release.ts";
import { releasingDecodedChunks } from "./decoded_chunk_release.ts";
import { openSessionsOnFirstBytes } from "./session_on_first_bytes.ts";
import { type AdmissionRefusal, type GrpcAdmission, isRefusal } from "./grpc_admission.ts";
import { streamAdmissionInterceptor } from "./stream_admission.ts";
import { PeerLogLimiter } from "../log/peer_log_limiter.ts";
import { keepAccepting } from "./accept_rearm.ts";
import { callEndInterceptor, countedDefinition } from "./traffic_counting.ts";
import type { TrafficSink } from "../process/traffic_meter.ts";
import type { Timers } from "../time/timers.ts";

/** Where a server listens, and the flag that named it (used in errors and logs). */
export type GrpcListen =
  | { readonly tcp: string; readonly flag: string }
  | { readonly unix: string; readonly flag: string };

/** One service: its method definitions and the handlers. */
export interface GrpcService {
  /** Method paths and (de)serializers, e.g. `ADS_SERVICE_DEFINITION`. */
  // deno-lint-ignore no-explicit-any
  readonly definition: grpc.ServiceDefinition<any>;
  /** One handler per method of `definition`. */
  readonly implementation: grpc.UntypedServiceImplementation;
}

/** What `startGrpcServer` serves, where and how. */
export interface GrpcServerOptions {
  /** Names the server in logs and errors, e.g. "ADS" or "SDS". */
  readonly name: string;
  /** TCP `host:port` (port 0 picks a free one) or a Unix socket path. */
  readonly listen: GrpcListen;
  /** The services served on this listener. */
  readonly services: readonly GrpcService[];
  /** Absent: plaintext. */
  readonly tls?: GrpcTls;
  /** Absent: grpc-js defaults (ping after 2 h idle). */
  readonly keepalive?: GrpcKeepalive;
  /** Per-connection bounds; absent fields take `DEFAULT_GRPC_LIMITS`. */
  readonly limits?: GrpcLimits;
  /** TCP accept queue length (the kernel caps it at `net.core.somaxconn`); default `DEFAULT_LISTEN_BACKLOG`. */
  readonly backlog?: number;
  /**
   * From accept until the peer's HTTP/2 SETTINGS (TLS handshake included), milliseconds; a slower peer is cut.
   * Default `DEFAULT_HANDSHAKE_TIMEOUT_MS`.
   */
  readonly handshakeTimeoutMs?: number;
  /** Times each peer's handshake; default the runtime's. */
  readonly handshakeTimers?: Timers;
  /** Told of every peer the transport dropped for misbehaving (after it is logged): counts it in a metric. */
  readonly onPeerDropped?: (drop: PeerDrop) => void;
  /**
   * Told each time an HTTP/2 session of this server closes: counts it in a metric. On Deno 2.9.3 each keeps its
   * native state for the life of the process (docs/deno_pin.md), so the count is what the churn has cost.
   */
  readonly onSessionClosed?: () => void;
  /**
   * Server-wide and per-peer bounds on connections (TCP listeners) and streams, shared by every listener given
   * the same object. Absent: only the per-connection `limits` hold.
   */
  readonly admission?: GrpcAdmission;
  /** Told of every connection or stream `admission` refused (logged once per peer a minute): counts it. */
  readonly onRefused?: (refusal: AdmissionRefusal, kind: "connection" | "stream") => void;
  /** Told the size of every request message and the end of every call (refused ones too); absent: nothing. */
  readonly traffic?: TrafficSink;
  /** Where the bound address, dropped peers and shutdown are logged. */
  readonly logger: Logger;
}

/** A running server. */
export interface RunningGrpcServer {
  /** The bound TCP port (the real one when 0 was asked for); 0 on a Unix socket. */
  readonly port: number;
  /** The bound address: `host:port`, or `unix:<path>`. */
  readonly address: string;
  /**
   * Stops accepting, lets open streams finish for `graceMs` (default `DEFAULT_SHUTDOWN_GRACE_MS`), then cuts
   * every connection. Resolves when stopped; calling it again returns the same promise.
   */
  close(graceMs?: number): Promise<void>;
  /**
   * Serves connections accepted from now on with `tls` (new roots for client certificates, a new serving
   * certificate); connections already open keep what they were handshaken with. TCP TLS listeners only.
   *
   * @throws {TypeError} on a Unix socket or plaintext listener
   */
  updateTls(tls: GrpcTls): void;
}

/** Connections the kernel may hold for a busy server before it resets new ones: enough for a fleet's storm. */
export const DEFAULT_LISTEN_BACKLOG = 4096;

/** A peer gets this long from accept to its HTTP/2 SETTINGS, as the HTTP listeners give a TLS handshake. */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;

/** Repeated drops for one reason are logged at most once per this period, with the count passed over. */
export const DROP_LOG_PERIOD_MS = 10_000;

/** How long `close` waits for open streams by default before cutting connections. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 2_000;

/** A listener could not be bound or configured; the message names the server, the address and the flag. */
export class GrpcListenError extends Error {
  constructor(readonly serverName: string, readonly address: string, readonly flag: string, cause: unknown) {
    super(
      `Cannot serve ${serverName} on "${address}" (${flag}): ${
        cause instanceof Error ? cause.message : cause
      }`,
      { cause },
    );
    this.name = "GrpcListenError";
  }
}

/**
 * Starts serving `options.services` on `options.listen`. A stale Unix socket file at the path is replaced.
 *
 * @throws {GrpcListenError} when the address cannot be bound
 * @throws {RangeError} when a limit, keepalive value or the listen address is out of range
 */
export async function startGrpcServer(options: GrpcServerOptions): Promise<RunningGrpcServer> {
  const { name, listen, logger } = options;
  const target = bindTarget(listen);
  const credentials = serverCredentials(options.tls, listen.flag);
  const admission = options.admission;
  const refused = refusalLogger(name, logger, options.onRefused);
  const { traffic } = options;
  // The first interceptor wraps the call itself; a stream the admission refuses still starts it, so is counted.
  const interceptors = [
    ...(traffic ? [callEndInterceptor(traffic)] : []),
    ...(admission ? [streamAdmissionInterceptor(admission, (refusal) => refused(refusal, "stream"))] : []),
  ];
  const server = new grpc.Server({
    ...grpcChannelOptions(options.keepalive, options.limits),
    ...(interceptors.length > 0 && { interceptors }),
  });
  for (const service of options.services) {
    const definition = traffic ? countedDefinition(service.definition, traffic) : service.definition;
    server.addService(definition, releasingDecodedChunks(service.implementation));
  }
  const handshakeTimeoutMs = checkHandshakeTimeout(
    options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
  );
  let closing: Promise<void> | undefined;
  const logDrop = dropLogger(name, logger);
  const guard = (http2Server: EventEmitter) => {
    openSessionsOnFirstBytes(http2Server, options.tls !== undefined);
    releaseClosedStreams(http2Server);
    releaseClosedSessions(http2Server);
    const { onSessionClosed } = options;
    if (onSessionClosed) {
      http2Server.on("session", (session: EventEmitter) => session.once("close", () => onSessionClosed()));
    }
    guardHttp2Server(http2Server, {
      secure: options.tls !== undefined,
      handshakeTimeoutMs,
      timers: options.handshakeTimers,
      isClosing: () => closing !== undefined,
      onDrop: (drop) => {
        logDrop(drop);
        options.onPeerDropped?.(drop);
      },
    });
  };
  let listener:
    | { tcp: net.Server; injectors: grpc.ConnectionInjector[]; stopRearm?: () => void }
    | undefined;
  let port: number;
  if ("unix" in listen) {
    await removeStaleSocket(listen.unix);
    port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(target.bind, credentials, (error, bound) => {
        if (error) reject(new GrpcListenError(name, target.shown, listen.flag, error));
        else resolve(bound);
      });
    });
    for (const http2Server of http2ServersOf(server)) guard(http2Server);
  } else {
    // grpc-js listens with Node's default backlog (511): in a storm of new proxies, connections the busy event
    // loop has not accepted yet overflow the kernel's accept queue and are reset. Listening ourselves with a
    // deep backlog and handing each socket to grpc-js keeps them waiting instead.
    const injectors = [newInjector(server, credentials, guard)];
    const tcp = net.createServer((socket) => {
      if (admission !== undefined) {
        const admitted = admission.admitConnection(socket.remoteAddress);
        if (isRefusal(admitted)) {
          refused(admitted, "connection");
          socket.destroy();
          return;
        }
        socket.once("close", () => admitted.release());
      }
      injectors.at(-1)!.injectConnection(socket);
    });
    listener = { tcp, injectors };
    const backlog = options.backlog ?? DEFAULT_LISTEN_BACKLOG;
    port = await new Promise<number>((resolve, reject) => {
      tcp.once("error", (error) => reject(new GrpcListenError(name, target.shown, listen.flag, error)));
      tcp.listen(
        { host: target.hostname, port: target.port, backlog },
        () => resolve((tcp.address() as net.AddressInfo).port),
      );
    });
    listener.stopRearm = keepAccepting(tcp, backlog);
  }
  const address = "unix" in listen ? target.bind : formatAddress(target.hostname, port);
  logger.info(`${name} gRPC server listening`, { address, tls: options.tls !== undefined });
  return {
    port: "unix" in listen ? 0 : port,
    address,
    close(graceMs = DEFAULT_SHUTDOWN_GRACE_MS) {
      closing ??= new Promise<void>((resolve) => {
        // Sessions of injected connections are the injector's: it ends them (and cuts them after the grace).
        listener?.stopRearm?.();
        listener?.tcp.close();
        for (const injector of listener?.injectors ?? []) injector.drain(Math.max(0, graceMs));
        const timer = setTimeout(() => {
          logger.info(`${name} gRPC server cut its remaining connections`, { address, graceMs });
          for (const injector of listener?.injectors ?? []) injector.destroy();
          server.forceShutdown();
          resolve();
        }, Math.max(0, graceMs));
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return closing;
    },
    updateTls(tls) {
      if (listener === undefined || options.tls === undefined) {
        throw new TypeError(
          `${name} gRPC server on ${address} serves no TLS over TCP: its TLS cannot be updated`,
        );
      }
      if (closing !== undefined) return;
      // The old injectors keep serving their open connections until close drains them.
      listener.injectors.push(newInjector(server, serverCredentials(tls, listen.flag), guard));
      logger.info(`${name} gRPC server serves new connections with updated TLS`, { address });
    },
  };
}

/** A connection injector for `credentials`, its HTTP/2 server guarded. */
function newInjector(
  server: grpc.Server,
  credentials: grpc.ServerCredentials,
  guard: (http2Server: EventEmitter) => void,
): grpc.ConnectionInjector {
  const injector = server.createConnectionInjector(credentials);
  guard(http2ServersOf(server).at(-1)!);
  return injector;
}

function checkHandshakeTimeout(ms: number): number {
  if (!Number.isFinite(ms) || ms < 1 || ms > MAX_TIMER_MS) {
    throw new RangeError(
      `Invalid gRPC handshake timeout "${ms}ms": expected 1 to ${MAX_TIMER_MS} milliseconds`,
    );
  }
  return ms;
}

/**
 * The HTTP/2 servers grpc-js made for this server (one per bound address or connection injector). grpc-js
 * offers no public hook on its connections; the guard needs one, and a grpc-js that moved this field fails
 * every server start (and the tests) rather than silently serving unguarded.
 */
function http2ServersOf(server: grpc.Server): EventEmitter[] {
  const servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map) || servers.size === 0) {
    throw new TypeError(
      "@grpc/grpc-js keeps no HTTP/2 servers in `Server.http2Servers`: shared/grpc/peer_guard.ts needs a new hook",
    );
  }
  return [...servers.keys()] as EventEmitter[];
}

/** Logs each dropped peer at warn; past the first of a reason in `DROP_LOG_PERIOD_MS`, counts them instead. */
function dropLogger(name: string, logger: Logger): (drop: PeerDrop) => void {
  const last = new Map<PeerDropReason, { at: number; passedOver: number }>();
  return (drop) => {
    const now = Date.now();
    const seen = last.get(drop.reason);
    if (seen !== undefined && now - seen.at < DROP_LOG_PERIOD_MS) {
      seen.passedOver++;
      return;
    }
    last.set(drop.reason, { at: now, passedOver: 0 });
    logger.warn(`${name} gRPC server dropped a peer`, {
      ...drop,
      ...(seen?.passedOver ? { droppedForThisReasonSinceLastLog: seen.passedOver } : {}),
    });
  };
}

/**
 * Logs each refused connection or stream at warn, at most once per peer address a minute (with the count passed
 * over), and tells `onRefused` of every one.
 */
function refusalLogger(
  name: string,
  logger: Logger,
  onRefused: GrpcServerOptions["onRefused"],
): (refusal: AdmissionRefusal, kind: "connection" | "stream") => void {
  const limiter = new PeerLogLimiter();
  return (refusal, kind) => {
    onRefused?.(refusal, kind);
    const passedOver = limiter.take(refusal.peer);
    if (passedOver === undefined) return;
    logger.warn(`${name} gRPC server refused a ${kind}: ${refusal.message}`, {
      peer: refusal.peer,
      reason: refusal.reason,
      ...(passedOver > 0 ? { refusedFromThisPeerSinceLastLog: passedOver } : {}),
    });
  };
}

function bindTarget(listen: GrpcListen): { bind: string; shown: string; hostname: string; port: number } {
  if ("unix" in listen) {
    if (listen.unix === "") {
      throw new RangeError(`Invalid ${listen.flag} "": expected the path of a Unix socket`);
    }
    return { bind: `unix:${listen.unix}`, shown: listen.unix, hostname: "", port: 0 };
  }
  const { hostname, port } = parseListenAddress(listen.tcp, listen.flag);
  return { bind: formatAddress(hostname, port), shown: listen.tcp, hostname, port };
}

/** A socket file left by a previous run would make the bind fail; anything else at the path is left alone. */
async function removeStaleSocket(path: string): Promise<void> {
  try {
    const info = await Deno.lstat(path);
    if (info.isSocket) await Deno.remove(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}
