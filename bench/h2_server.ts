/**
 * The benchmark's own HTTP/2 gRPC server on `Deno.listen`: plain TCP, h2c by prior knowledge (as the
 * control plane's 15010 is), every stream a bidirectional gRPC call handed to `onStream`. It is the measure of
 * issue #32 item 3, what writing responses as DATA frames on the connection directly, batched per connection
 * per turn, costs against grpc-js over `node:http2`; it is no production transport (no TLS, no keepalive, no
 * per-peer bounds, request headers never decoded).
 *
 * @module
 */
import { DEFAULT_H2_CONNECTION_OPTIONS, H2Connection, type H2ConnectionOptions } from "./h2_connection.ts";
import type { H2Stream } from "./h2_stream.ts";
import { TurnScheduler } from "./h2_turn_writer.ts";

/** Where the server listens, and how each connection is bounded. */
export interface OwnH2ServerOptions {
  readonly hostname?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  readonly connection?: H2ConnectionOptions;
}

/** A listening own-HTTP/2 server. */
export class OwnH2Server {
  readonly #listener: Deno.TcpListener;
  readonly #connections = new Set<H2Connection>();
  readonly #scheduler = new TurnScheduler();
  readonly #accepting: Promise<void>;
  readonly #served = new Set<Promise<void>>();

  private constructor(
    listener: Deno.TcpListener,
    private readonly onStream: (stream: H2Stream) => void,
    private readonly options: H2ConnectionOptions,
  ) {
    this.#listener = listener;
    this.#accepting = this.#accept();
  }

  /** Listens (loopback and a free port unless told otherwise) and serves every connection. */
  static listen(onStream: (stream: H2Stream) => void, options: OwnH2ServerOptions = {}): OwnH2Server {
    const listener = Deno.listen({ hostname: options.hostname ?? "127.0.0.1", port: options.port ?? 0 });
    return new OwnH2Server(listener, onStream, options.connection ?? DEFAULT_H2_CONNECTION_OPTIONS);
  }

  /** The port listened on. */
  get port(): number {
    return this.#listener.addr.port;
  }

  /** Connections open now. */
  get connectionCount(): number {
    return this.#connections.size;
  }

  /** Resolves once every connection has written all it queued. */
  async drained(): Promise<void> {
    await Promise.all([...this.#connections].map((connection) => connection.drained()));
  }

  /** Stops listening, ends every connection with GOAWAY, and resolves once all are closed. */
  async close(): Promise<void> {
    this.#listener.close();
    await this.#accepting;
    for (const connection of this.#connections) connection.close();
    await Promise.all(this.#served);
  }

  async #accept(): Promise<void> {
    try {
      for await (const conn of this.#listener) {
        conn.setNoDelay(true);
        const connection = new H2Connection(conn, this.onStream, this.#scheduler, this.options);
        this.#connections.add(connection);
        const served: Promise<void> = connection.serve().finally(() => {
          this.#connections.delete(connection);
          this.#served.delete(served);
        });
        this.#served.add(served);
      }
    } catch (error) {
      // Closing the listener ends the loop with BadResource; anything else is a real failure.
      if (!(error instanceof Deno.errors.BadResource)) throw error;
    }
  }
}
