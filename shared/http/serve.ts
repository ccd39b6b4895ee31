import type { Logger } from "../log/logger.ts";
import { formatAddress, type ListenAddress } from "./listen_address.ts";

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

/** Starts serving `handler` on `addr`, logs the bound address, and resolves once listening. */
export async function serveHttp(
  name: string,
  addr: ListenAddress,
  handler: (request: Request) => Response | Promise<Response>,
  log: Logger,
  tls?: TlsPem,
): Promise<RunningServer> {
  const controller = new AbortController();
  let bound: ListenAddress | undefined;
  const listening = Promise.withResolvers<void>();
  const server = Deno.serve({
    hostname: addr.hostname,
    port: addr.port,
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
  }, handler);
  await listening.promise;
  const address = bound!;
  const url = `${tls ? "https" : "http"}://${
    formatAddress(address.hostname === "0.0.0.0" ? "127.0.0.1" : address.hostname, address.port)
  }`;
  log.info(`${name} listening`, { address: formatAddress(address.hostname, address.port), url });
  return {
    name,
    address,
    url,
    async shutdown() {
      controller.abort();
      await server.finished;
    },
  };
}
