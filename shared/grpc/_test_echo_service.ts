/**
 * Test helper: a small byte-level service to exercise the transport (echo, peer certificate, held streams) and
 * clients for it over TCP, Unix sockets and TLS.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { peerCertificateDer } from "./peer_identity.ts";
import type { GrpcAdmissionSettings } from "./grpc_admission.ts";
import {
  type GrpcServerOptions,
  type GrpcService,
  type RunningGrpcServer,
  startGrpcServer,
} from "./grpc_server.ts";
import { silentLogger } from "../log/logger.ts";

const bytes = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

function method(name: string, requestStream: boolean, responseStream: boolean) {
  return {
    path: `/test.Echo/${name}`,
    requestStream,
    responseStream,
    requestSerialize: bytes,
    requestDeserialize: bytes,
    responseSerialize: bytes,
    responseDeserialize: bytes,
  };
}

/** Echo returns its request; Peer returns the verified client certificate (empty without one); Hold stays open. */
export const ECHO_DEFINITION = {
  Echo: method("Echo", false, false),
  Peer: method("Peer", false, false),
  Hold: method("Hold", true, true),
} as const satisfies grpc.ServiceDefinition;

/** What the held streams of the service did. */
export interface HoldRecord {
  /** Streams open now. */
  open: number;
  /** The most open at once. */
  peak: number;
  /** Resolves each time a stream opens; replaced after firing. */
  opened: PromiseWithResolvers<void>;
}

/** The echo service and a record of its held streams. */
export function echoService(): { service: GrpcService; holds: HoldRecord } {
  const holds: HoldRecord = { open: 0, peak: 0, opened: Promise.withResolvers() };
  const service: GrpcService = {
    definition: ECHO_DEFINITION,
    implementation: {
      Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) =>
        done(null, call.request),
      Peer: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) =>
        done(null, bytes(peerCertificateDer(call) ?? new Uint8Array())),
      Hold: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
        holds.open++;
        holds.peak = Math.max(holds.peak, holds.open);
        const opened = holds.opened;
        holds.opened = Promise.withResolvers();
        opened.resolve();
        let ended = false;
        const end = () => {
          if (ended) return;
          ended = true;
          holds.open--;
        };
        call.on("data", (chunk: Buffer) => call.write(chunk));
        call.on("end", () => {
          end();
          call.end();
        });
        call.on("error", end);
        call.on("cancelled", end);
      },
    },
  };
  return { service, holds };
}

const EchoClient = grpc.makeClientConstructor(ECHO_DEFINITION, "Echo");

/** A client of the echo service. */
export class EchoTestClient {
  readonly #client: grpc.Client;
  // deno-lint-ignore no-explicit-any
  readonly #methods: any;

  constructor(
    target: string,
    credentials = grpc.credentials.createInsecure(),
    options: grpc.ChannelOptions = {},
  ) {
    this.#client = new EchoClient(target, credentials, options);
    this.#methods = this.#client;
  }

  /** Calls `name` (Echo or Peer) with `payload`, within `deadlineMs` if given; rejects with the gRPC status error. */
  unary(name: "Echo" | "Peer", payload: Uint8Array, deadlineMs?: number): Promise<Uint8Array> {
    const options = deadlineMs === undefined ? {} : { deadline: Date.now() + deadlineMs };
    return new Promise((resolve, reject) => {
      this.#methods[name](bytes(payload), options, (error: grpc.ServiceError | null, reply?: Buffer) => {
        if (error) reject(error);
        else resolve(new Uint8Array(reply!));
      });
    });
  }

  /** Opens a Hold stream. */
  hold(): grpc.ClientDuplexStream<Buffer, Buffer> {
    const call = this.#methods.Hold() as grpc.ClientDuplexStream<Buffer, Buffer>;
    call.on("error", () => {});
    return call;
  }

  /** Closes the channel. */
  close(): void {
    this.#client.close();
  }
}

/** Starts an echo server on a free loopback port; `parts` override the options. */
export async function startEchoServer(
  parts: Partial<GrpcServerOptions> = {},
): Promise<{ server: RunningGrpcServer; holds: HoldRecord }> {
  const { service, holds } = echoService();
  const server = await startGrpcServer({
    name: "Echo",
    listen: { tcp: "127.0.0.1:0", flag: "--testAddr" },
    services: [service],
    logger: silentLogger,
    ...parts,
  });
  return { server, holds };
}

/** The setting names an admission under test reports its bounds by. */
export const TEST_ADMISSION_SETTINGS: GrpcAdmissionSettings = {
  maxConnections: "TEST_MAX_CONNECTIONS",
  maxConnectionsPerPeer: "TEST_MAX_CONNECTIONS_PER_PEER",
  maxStreams: "TEST_MAX_STREAMS",
  maxStreamsPerPeer: "TEST_MAX_STREAMS_PER_PEER",
  connectionRatePerPeer: "TEST_CONNECTION_RATE_PER_PEER",
};
