/**
 * A tiny gRPC backend for routing tests: one unary method, `/mesh.test.Echo/Who`, that answers with the
 * backend's name. Messages are raw bytes (identity serializers), so no `.proto` is needed on either side.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";

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
  const server = new grpc.Server();
  let calls = 0;
  const reply = Buffer.from(name, "utf8");
  server.addService(WHO_SERVICE, {
    Who: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      calls++;
      callback(null, reply);
    },
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `127.0.0.1:${port}`,
      grpc.ServerCredentials.createInsecure(),
      (error, actual) => error ? reject(error) : resolve(actual),
    )
  );
  return {
    name,
    port: bound,
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        // A client holding a connection open must not keep the test waiting.
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2_000);
      }),
  };
}
