/**
 * The ADS service, `envoy.service.discovery.v3.AggregatedDiscoveryService`, as a grpc-js service definition.
 * Messages pass as raw bytes (identity serializers): requests are decoded by `discovery_request.ts` and
 * responses framed from cached resource bytes by `discovery_frame.ts`, so nothing is encoded twice.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { ServiceDefinition } from "@grpc/grpc-js";

/** The fully qualified ADS service name. */
export const ADS_SERVICE_NAME = "envoy.service.discovery.v3.AggregatedDiscoveryService";

/** grpc-js copies what a serializer returns into its frame, so a view over the same memory is enough. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const identity = (bytes: Uint8Array): Buffer => asBuffer(bytes);

/** The ADS service definition with byte-level (de)serializers, for servers and clients alike. */
export const ADS_SERVICE_DEFINITION = {
  StreamAggregatedResources: {
    path: `/${ADS_SERVICE_NAME}/StreamAggregatedResources`,
    requestStream: true,
    responseStream: true,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
  DeltaAggregatedResources: {
    path: `/${ADS_SERVICE_NAME}/DeltaAggregatedResources`,
    requestStream: true,
    responseStream: true,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
} as const satisfies ServiceDefinition;
