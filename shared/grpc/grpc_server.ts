/**
 * The one gRPC server every service of both programs runs on: it binds a TCP address or a Unix socket, with
 * optional TLS and client certificates, applies keepalive and per-connection limits, and shuts down gracefully
 * then by force.
 *
 * @module
 */
import net from "node:net";
import * as grpc from "@grpc/grpc-js";
import { formatAddress, parseListenAddress } from "../http/listen_address.ts";
import type { Logger } from "../log/logger.ts";
import { grpcChannelOptions, type GrpcKeepalive, type GrpcLimits } from "./grpc_channel_options.ts";
import { type GrpcTls, serverCredentials } from "./server_credentials.ts";

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
  /** Where the bound address and shutdown are logged. */
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
}

/** Connections the kernel may hold for a busy server before it resets new ones: enough for a fleet's storm. */
export const DEFAULT_LISTEN_BACKLOG = 4096;

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
  const server = new grpc.Server(grpcChannelOptions(options.keepalive, options.limits));
  for (const service of options.services) server.addService(service.definition, service.implementation);
  let listener: { tcp: net.Server; injector: grpc.ConnectionInjector } | undefined;
  let port: number;
  if ("unix" in listen) {
    await removeStaleSocket(listen.unix);
    port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(target.bind, credentials, (error, bound) => {
        if (error) reject(new GrpcListenError(name, target.shown, listen.flag, error));
        else resolve(bound);
      });
    });
  } else {
    // grpc-js listens with Node's default backlog (511): in a storm of new proxies, connections the busy event
    // loop has not accepted yet overflow the kernel's accept queue and are reset. Listening ourselves with a
    // deep backlog and handing each socket to grpc-js keeps them waiting instead.
    const injector = server.createConnectionInjector(credentials);
    const tcp = net.createServer((socket) => injector.injectConnection(socket));
    listener = { tcp, injector };
    port = await new Promise<number>((resolve, reject) => {
      tcp.once("error", (error) => reject(new GrpcListenError(name, target.shown, listen.flag, error)));
      tcp.listen({
        host: target.hostname,
        port: target.port,
        backlog: options.backlog ?? DEFAULT_LISTEN_BACKLOG,
      }, () => resolve((tcp.address() as net.AddressInfo).port));
    });
  }
  const address = "unix" in listen ? target.bind : formatAddress(target.hostname, port);
  logger.info(`${name} gRPC server listening`, { address, tls: options.tls !== undefined });
  let closing: Promise<void> | undefined;
  return {
    port: "unix" in listen ? 0 : port,
    address,
    close(graceMs = DEFAULT_SHUTDOWN_GRACE_MS) {
      closing ??= new Promise<void>((resolve) => {
        // Sessions of injected connections are the injector's: it ends them (and cuts them after the grace).
        listener?.tcp.close();
        listener?.injector.drain(Math.max(0, graceMs));
        const timer = setTimeout(() => {
          logger.info(`${name} gRPC server cut its remaining connections`, { address, graceMs });
          listener?.injector.destroy();
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
