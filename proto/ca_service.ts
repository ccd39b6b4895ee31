/**
 * The CA's wire contract (`proto/mesh/ca.proto`) as grpc-js service definitions: ours,
 * `mesh.v1.auth.MeshCertificateService`, and the same messages under Istio's
 * `istio.v1.auth.IstioCertificateService`, so agents built for either reach the CA unchanged. Shared by the CA
 * server and the agent's CSR client.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { fileURLToPath } from "node:url";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";
import protobuf from "protobufjs";
import { type JsonObject, jsonToStruct, structToJson } from "./struct_json.ts";

/** A certificate signing request. */
export interface CertificateRequestMessage {
  /** PEM CSR. */
  readonly csr: string;
  /** Requested validity in seconds; ≤ 0 for the CA's default. */
  readonly validityDuration: number;
  /** Caller metadata. */
  readonly metadata?: JsonObject;
}

/** The signed chain, leaf first, root last. */
export interface CertificateResponseMessage {
  /** PEM certificates. */
  readonly certChain: readonly string[];
}

/** Our service name. */
export const MESH_CA_SERVICE = "mesh.v1.auth.MeshCertificateService";
/** Istio's service name for the same contract. */
export const ISTIO_CA_SERVICE = "istio.v1.auth.IstioCertificateService";

const root = new protobuf.Root();
root.loadSync(fileURLToPath(new URL("./mesh/ca.proto", import.meta.url)), { keepCase: true });
const RequestType = root.lookupType("mesh.v1.auth.MeshCertificateRequest");
const ResponseType = root.lookupType("mesh.v1.auth.MeshCertificateResponse");

/** Encodes a request. */
export function encodeCertificateRequest(message: CertificateRequestMessage): Buffer {
  const object = {
    csr: message.csr,
    validity_duration: message.validityDuration,
    ...(message.metadata ? { metadata: jsonToStruct(message.metadata) } : {}),
  };
  return Buffer.from(RequestType.encode(RequestType.fromObject(object)).finish());
}

/**
 * Decodes a request.
 *
 * @throws {TypeError} when the bytes are not a request
 */
export function decodeCertificateRequest(bytes: Uint8Array): CertificateRequestMessage {
  let decoded: Record<string, unknown>;
  try {
    decoded = RequestType.toObject(RequestType.decode(bytes), { longs: Number, defaults: true });
  } catch (cause) {
    throw new TypeError(
      `Malformed certificate request (${bytes.length} bytes): ${(cause as Error).message}`,
      {
        cause,
      },
    );
  }
  return {
    csr: String(decoded.csr ?? ""),
    validityDuration: Number(decoded.validity_duration ?? 0),
    ...(decoded.metadata ? { metadata: structToJson(decoded.metadata) } : {}),
  };
}

/** Encodes a response. */
export function encodeCertificateResponse(message: CertificateResponseMessage): Buffer {
  return Buffer.from(
    ResponseType.encode(ResponseType.fromObject({ cert_chain: [...message.certChain] })).finish(),
  );
}

/** Decodes a response. */
export function decodeCertificateResponse(bytes: Uint8Array): CertificateResponseMessage {
  const decoded = ResponseType.toObject(ResponseType.decode(bytes), { defaults: true }) as {
    cert_chain: string[];
  };
  return { certChain: decoded.cert_chain };
}

/** The CA service's one method, as grpc-js describes it. */
export interface CaServiceDefinition extends ServiceDefinition {
  /** Signs a CSR (unary). */
  readonly CreateCertificate: MethodDefinition<CertificateRequestMessage, CertificateResponseMessage>;
}

/** The grpc-js definition of the CA service under `serviceName`. */
export function caServiceDefinition(serviceName: string): CaServiceDefinition {
  return {
    CreateCertificate: {
      path: `/${serviceName}/CreateCertificate`,
      requestStream: false,
      responseStream: false,
      requestSerialize: encodeCertificateRequest,
      requestDeserialize: (bytes: Buffer) => decodeCertificateRequest(bytes),
      responseSerialize: encodeCertificateResponse,
      responseDeserialize: (bytes: Buffer) => decodeCertificateResponse(bytes),
    },
  } as const satisfies ServiceDefinition;
}
