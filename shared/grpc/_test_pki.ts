/**
 * Test PKI for the gRPC transport: a CA, a server certificate and a client certificate, and clients and server
 * TLS settings built from them.
 *
 * @module
 */
import "reflect-metadata";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { createSelfSignedCa, issueCertificate } from "../pki/mod.ts";
import { exportPrivateKeyPem } from "../pki/private_key_pem.ts";
import { certificatesToPem } from "../pki/certificate_pem.ts";
import { generateKeyPair } from "../pki/key_pair.ts";
import type { RunningGrpcServer } from "./grpc_server.ts";
import type { GrpcTls } from "./server_credentials.ts";
import { EchoTestClient } from "./_test_echo_service.ts";

/** The name in the server certificate; clients dial 127.0.0.1 and check this name (TLS forbids an IP as SNI). */
export const SERVER_NAME = "echo.mesh.test";

/** A CA, a server certificate for SERVER_NAME and a client certificate, as PEM. */
export async function testPki(org = "test.local") {
  const ca = await createSelfSignedCa({ org, ttlMs: 3_600_000, keyAlgorithm: "ECDSA" });
  const leaf = async (usage: "server" | "client", names: { dnsNames?: string[]; uris?: string[] }) => {
    const keys = await generateKeyPair({ algorithm: "ECDSA" });
    const cert = await issueCertificate(ca, {
      ...names,
      publicKey: keys.publicKey,
      ttlMs: 3_600_000,
      usages: [usage],
    });
    return { keyPem: await exportPrivateKeyPem(keys.privateKey), certPem: certificatesToPem([cert]), cert };
  };
  return {
    caPem: ca.certificatePem,
    server: await leaf("server", { dnsNames: [SERVER_NAME] }),
    client: await leaf("client", { uris: ["spiffe://test.local/ns/default/sa/client"] }),
  };
}

export type Pki = Awaited<ReturnType<typeof testPki>>;

export function serverTls(pki: Pki, extra: Partial<GrpcTls> = {}): GrpcTls {
  return { keyPem: pki.server.keyPem, certChainPem: pki.server.certPem, ...extra };
}

export function tlsClient(server: RunningGrpcServer, pki: Pki, clientCert?: Pki["client"]): EchoTestClient {
  const enc = (text: string) => Buffer.from(text);
  const credentials = clientCert
    ? grpc.credentials.createSsl(enc(pki.caPem), enc(clientCert.keyPem), enc(clientCert.certPem))
    : grpc.credentials.createSsl(enc(pki.caPem));
  return new EchoTestClient(server.address, credentials, { "grpc.ssl_target_name_override": SERVER_NAME });
}
