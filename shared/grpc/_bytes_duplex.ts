/**
 * A gRPC service of one bidirectional method whose messages are raw bytes both ways, for tests of the transport
 * that need a call without a schema.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type * as grpc from "@grpc/grpc-js";

/** `bytes` as a Buffer over the same memory. */
export const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** The definition of a service with one method `Stream` at `path`, bytes in and out, streaming both ways. */
export function bytesDuplexDefinition(path: string) {
  return {
    Stream: {
      path,
      requestStream: true,
      responseStream: true,
      requestSerialize: asBuffer,
      requestDeserialize: asBuffer,
      responseSerialize: asBuffer,
      responseDeserialize: asBuffer,
    },
  } as const satisfies grpc.ServiceDefinition;
}
