/**
 * The gRPC transport of ADS: `envoy.service.discovery.v3.AggregatedDiscoveryService` on a grpc-js server.
 * Messages pass as raw bytes (identity serializers) so responses framed from cached resource bytes are
 * written without re-encoding.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import type { ListenAddress } from "../../shared/http/listen_address.ts";
import { formatAddress } from "../../shared/http/listen_address.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { DiscoveryService } from "./discovery_service.ts";
import type { PushSnapshot } from "../generate/generator.ts";
import type { AdsCall } from "./xds_connection.ts";
import { grpcServerOptions, type KeepaliveOptions } from "./xds_settings.ts";

const SERVICE = "/envoy.service.discovery.v3.AggregatedDiscoveryService";

/** grpc-js copies what a serializer returns into its frame, so a view over the same memory is enough. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const identity = (bytes: Uint8Array): Buffer => asBuffer(bytes);

/** The ADS service definition with byte-level (de)serializers, for servers and test clients alike. */
export const ADS_SERVICE_DEFINITION = {
  StreamAggregatedResources: {
    path: `${SERVICE}/StreamAggregatedResources`,
    requestStream: true,
    responseStream: true,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
  DeltaAggregatedResources: {
    path: `${SERVICE}/DeltaAggregatedResources`,
    requestStream: true,
    responseStream: true,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
} as const satisfies grpc.ServiceDefinition;

/** Where and how to serve ADS. */
export interface XdsServerOptions<P extends PushSnapshot> {
  /** `--grpcAddr`; port 0 picks a free port. */
  readonly addr: ListenAddress;
  /** Serves the ADS streams the server accepts. */
  readonly service: DiscoveryService<P>;
  /** gRPC keepalive and connection age limits, from the `--keepalive*` flags. */
  readonly keepalive: KeepaliveOptions;
  /** Where the bound address is logged. */
  readonly logger: Logger;
  /** Insecure for `--grpcAddr`; the secure port passes TLS credentials. */
  readonly credentials?: grpc.ServerCredentials;
}

/** A running ADS server. */
export interface RunningXdsServer {
  /** The bound port (the real one when 0 was asked for). */
  readonly port: number;
  /** Ends every stream, then stops the server; resolves when it has stopped. */
  close(): Promise<void>;
}

/** How long `close` waits for streams to finish before cutting connections. */
const SHUTDOWN_GRACE_MS = 2_000;

/**
 * Starts serving ADS on `options.addr`.
 *
 * @throws {Error} when the address cannot be bound, naming it
 */
export async function startXdsServer<P extends PushSnapshot>(
  options: XdsServerOptions<P>,
): Promise<RunningXdsServer> {
  const { service } = options;
  const server = new grpc.Server(grpcServerOptions(options.keepalive, service.settings));
  server.addService(ADS_SERVICE_DEFINITION, {
    StreamAggregatedResources: (call: AdsCall) => service.handleStream(call),
    DeltaAggregatedResources: (call: AdsCall) => service.handleDeltaStream(call),
  });
  const address = formatAddress(options.addr.hostname, options.addr.port);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(
      address,
      options.credentials ?? grpc.ServerCredentials.createInsecure(),
      (error, bound) => {
        if (error) {
          reject(
            new Error(`Cannot serve ADS on "${address}" (--grpcAddr): ${error.message}`, { cause: error }),
          );
        } else resolve(bound);
      },
    );
  });
  options.logger.info("ADS server listening", { address: formatAddress(options.addr.hostname, port) });
  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        service.close();
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, SHUTDOWN_GRACE_MS);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return closing;
    },
  };
}
