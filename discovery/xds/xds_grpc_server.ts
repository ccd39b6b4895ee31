/**
 * ADS on the shared gRPC server: the `AggregatedDiscoveryService` handlers of a `AdsServer`, served on
 * `--grpcAddr` with the keepalive flags and the `MESH_GPRC_*` limits.
 *
 * @module
 */
import { ADS_SERVICE_DEFINITION } from "@mesh/proto/ads_service";
import type { ListenAddress } from "@mesh/shared/http/listen_address";
import { formatAddress } from "@mesh/shared/http/listen_address";
import type { Logger } from "@mesh/shared/log/logger";
import type { GrpcService } from "@mesh/shared/grpc/grpc_server";
import { startGrpcServer } from "@mesh/shared/grpc/grpc_server";
import type { GrpcTls } from "@mesh/shared/grpc/server_credentials";
import type { GrpcAdmission } from "@mesh/shared/grpc/grpc_admission";
import type { TrafficSink } from "@mesh/shared/process/traffic_meter";
import { type GrpcRefusal, GrpcStatusError } from "@mesh/shared/grpc/grpc_status";
import * as grpc from "@grpc/grpc-js";
import type { AdsServer } from "./ads_server.ts";
import type { PushSnapshot } from "../generate/generator.ts";
import type { AdsCall } from "./xds_connection.ts";
import type { StreamCaller } from "./ads_stream.ts";
import { grpcKeepalive, grpcLimits, type KeepaliveOptions } from "./xds_settings.ts";

/** The ADS service of `service`, to register on any listener (plaintext, or TLS beside the CA). */
export function adsGrpcService<P extends PushSnapshot>(
  service: AdsServer<P>,
  authenticate?: StreamAuthenticator,
): GrpcService {
  // Each admitted stream's connection sends through a send port (`SendPorts`), which writes prefixed
  // responses uncopied and paces the streams of one HTTP/2 connection.
  const gated = (call: AdsCall, serve: (caller?: StreamCaller) => void) => {
    if (authenticate === undefined) return serve();
    // Requests wait in the stream (no reader yet) while the caller is authenticated.
    authenticate(call).then(
      (result) =>
        "authorize" in result
          ? serve(result)
          : call.emit("error", new GrpcStatusError(result.code, result.details)),
      (error) =>
        call.emit(
          "error",
          new GrpcStatusError(
            grpc.status.INTERNAL,
            `Authenticating the caller failed: ${(error as Error).message}`,
            {
              cause: error,
            },
          ),
        ),
    );
  };
  return {
    definition: ADS_SERVICE_DEFINITION,
    implementation: {
      StreamAggregatedResources: (call: AdsCall) => gated(call, (a) => service.handleStream(call, a)),
      DeltaAggregatedResources: (call: AdsCall) => gated(call, (a) => service.handleDeltaStream(call, a)),
    },
  };
}

/**
 * Authenticates the caller of a stream before its first request is read: who it proved to be, or the refusal
 * the stream ends with (UNAUTHENTICATED).
 */
export type StreamAuthenticator = (call: AdsCall) => Promise<StreamCaller | GrpcRefusal>;

/** Where and how to serve ADS. */
export interface XdsServerOptions<P extends PushSnapshot> {
  /** `--grpcAddr`; port 0 picks a free port. */
  readonly addr: ListenAddress;
  /** Serves the ADS streams the server accepts. */
  readonly service: AdsServer<P>;
  /** gRPC keepalive and connection age limits, from the `--keepalive*` flags. */
  readonly keepalive: KeepaliveOptions;
  /** Where the bound address is logged. */
  readonly logger: Logger;
  /** Absent for `--grpcAddr` (plaintext). */
  readonly tls?: GrpcTls;
  /** The flag named in errors; default `--grpcAddr`. */
  readonly flag?: string;
  /** More services on the same listener (the CA on the secure port). */
  readonly services?: readonly GrpcService[];
  /** Authenticates callers (`XDS_AUTH` on the secure port); absent: every caller is admitted. */
  readonly authenticate?: StreamAuthenticator;
  /** Bounds on connections and streams, shared by the xDS listeners (`xdsAdmissionFromEnv`); absent: none. */
  readonly admission?: GrpcAdmission;
  /** Told what callers send (request sizes, call ends), for the collection after a burst; absent: nothing. */
  readonly traffic?: TrafficSink;
}

/** A running ADS server. */
export interface RunningXdsServer {
  /** The bound port (the real one when 0 was asked for). */
  readonly port: number;
  /** Ends every stream, then stops the server; resolves when it has stopped. */
  close(): Promise<void>;
  /** Serves new connections with `tls` (see `RunningGrpcServer.updateTls`). */
  updateTls(tls: GrpcTls): void;
}

/**
 * Starts serving ADS on `options.addr`.
 *
 * @throws {GrpcListenError} when the address cannot be bound, naming it and the flag
 */
export async function startXdsServer<P extends PushSnapshot>(
  options: XdsServerOptions<P>,
): Promise<RunningXdsServer> {
  const { service } = options;
  const server = await startGrpcServer({
    name: "ADS",
    listen: {
      tcp: formatAddress(options.addr.hostname, options.addr.port),
      flag: options.flag ?? "--grpcAddr",
    },
    services: [adsGrpcService(service, options.authenticate), ...(options.services ?? [])],
    tls: options.tls,
    keepalive: grpcKeepalive(options.keepalive),
    limits: grpcLimits(service.settings),
    onPeerDropped: service.peerDropped,
    onSessionClosed: service.sessionClosed,
    ...(options.admission && { admission: options.admission, onRefused: service.admissionRefused }),
    ...(options.traffic && { traffic: options.traffic }),
    logger: options.logger,
  });
  return {
    port: server.port,
    close() {
      service.close();
      return server.close();
    },
    updateTls: (tls) => server.updateTls(tls),
  };
}
