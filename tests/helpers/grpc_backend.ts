/**
 * A tiny gRPC backend for routing tests: one unary method, `/mesh.test.Echo/Who`, that answers with the
 * backend's name. Messages are raw bytes (identity serializers), so no `.proto` is needed on either side.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type * as grpc from "@grpc/grpc-js";
import { startGrpcServer } from "../../shared/grpc/grpc_server.ts";
import { silentLogger } from "../../shared/log/logger.ts";

/** The method path every test backend serves. */
export const WHO_METHOD = "/mesh.test.Echo/Who";

const identity = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** The service definition of the Who method with byte (de)serializers, for servers and clients. */
export const WHO_SERVICE = {
  Who: {
    path: WHO_METHOD,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
} as const satisfies grpc.ServiceDefinition;

/** A running backend. */
export interface GrpcBackend {
  readonly name: string;
  readonly port: number;
  /** Calls answered so far. */
  readonly calls: () => number;
  close(): Promise<void>;
}

/** Starts a backend on 127.0.0.1 (a free port unless `port` is given) that answers every call with `name`. */
export async function startGrpcBackend(name: string, port = 0): Promise<GrpcBackend> {
  let calls = 0;
  const reply = Buffer.from(name, "utf8");
  const server = await startGrpcServer({
    name: `backend ${name}`,
    listen: { tcp: `127.0.0.1:${port}`, flag: "startGrpcBackend" },
    services: [{
      definition: WHO_SERVICE,
      implementation: {
        Who: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
          calls++;
          callback(null, reply);
        },
      },
    }],
    logger: silentLogger,
  });
  return {
    name,
    port: server.port,
    calls: () => calls,
    // A client holding a connection open must not keep the test waiting.
    close: () => server.close(2_000),
  };
}
