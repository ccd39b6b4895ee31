/**
 * Test support: a stand-in for the mesh CA on a loopback port, serving the CA contract over TLS, asking for
 * (not requiring) a client certificate, signing every CSR with a throwaway CA and recording what each caller
 * presented; and an in-process signer with a throwaway CA. Only tests import this file.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { caServiceDefinition, type CertificateRequestMessage, MESH_CA_SERVICE } from "@mesh/proto/ca_service";
import {
  GrpcStatusError,
  peerCertificateDer,
  type RunningGrpcServer,
  startGrpcServer,
} from "@mesh/shared/grpc";
import { silentLogger } from "@mesh/shared/log/logger";
import {
  type CertificateAuthority,
  certificatesToPem,
  createSelfSignedCa,
  exportPrivateKeyPem,
  generateKeyPair,
  issueCertificate,
} from "@mesh/shared/pki";
import type { CsrSigner } from "./workload_secrets.ts";

/** What one CSR call carried. */
export interface RecordedCsr {
  /** The `authorization` header, if any. */
  readonly authorization?: string;
  /** The client certificate's DER, base64, if one was presented and verified. */
  readonly clientCert?: string;
  /** The CSR's PEM. */
  readonly csr: string;
}

/** A running stand-in CA. */
export interface TestCa {
  readonly address: string;
  /** The root its serving certificate and everything it signs chain to. */
  readonly rootPem: string;
  readonly ca: CertificateAuthority;
  readonly calls: RecordedCsr[];
  /** Fails the next `n` calls with UNAVAILABLE. */
  failNext(n: number): void;
  /** A key pair and chain issued by this CA for `uri`, as a provisioned certificate would be. */
  issue(uri: string): Promise<{ keyPem: string; certChainPem: string; der: string }>;
  close(): Promise<void>;
}

/** Starts a stand-in CA on 127.0.0.1, its certificate naming `meshd.mesh-system.svc`, under `service`. */
export async function startTestCa(service = MESH_CA_SERVICE): Promise<TestCa> {
  const ca = await createSelfSignedCa({ org: "cluster.local", ttlMs: 3_600_000, keyAlgorithm: "ECDSA" });
  const issue = async (options: { uris?: string[]; dnsNames?: string[] }) => {
    const keys = await generateKeyPair({ algorithm: "ECDSA" });
    const leaf = await issueCertificate(ca, { publicKey: keys.publicKey, ttlMs: 600_000, ...options });
    return {
      keyPem: await exportPrivateKeyPem(keys.privateKey),
      certChainPem: certificatesToPem([leaf]),
      der: Buffer.from(leaf.rawData).toString("base64"),
    };
  };
  const serving = await issue({ dnsNames: ["meshd.mesh-system.svc"] });
  const calls: RecordedCsr[] = [];
  let failures = 0;
  const server: RunningGrpcServer = await startGrpcServer({
    name: "test CA",
    listen: { tcp: "127.0.0.1:0", flag: "test" },
    tls: { keyPem: serving.keyPem, certChainPem: serving.certChainPem, caPem: ca.certificatePem },
    logger: silentLogger,
    services: [{
      definition: caServiceDefinition(service),
      implementation: {
        CreateCertificate: async (
          call: grpc.ServerUnaryCall<CertificateRequestMessage, unknown>,
          callback: grpc.sendUnaryData<unknown>,
        ) => {
          const der = peerCertificateDer(call);
          const authorization = call.metadata.get("authorization")[0];
          calls.push({
            csr: call.request.csr,
            ...(authorization !== undefined ? { authorization: String(authorization) } : {}),
            ...(der !== undefined ? { clientCert: Buffer.from(der).toString("base64") } : {}),
          });
          if (failures > 0) {
            failures--;
            callback(new GrpcStatusError(grpc.status.UNAVAILABLE, "Test CA failing on purpose"));
            return;
          }
          const leaf = await issueCertificate(ca, {
            csr: call.request.csr,
            uris: ["spiffe://cluster.local/ns/default/sa/default"],
            ttlMs: Math.max(call.request.validityDuration, 1) * 1000,
          });
          callback(null, { certChain: [certificatesToPem([leaf]), ca.certificatePem] });
        },
      },
    }],
  });
  return {
    address: `127.0.0.1:${server.port}`,
    rootPem: ca.certificatePem,
    ca,
    calls,
    failNext: (n) => failures = n,
    issue: (uri) => issue({ uris: [uri] }),
    close: () => server.close(0),
  };
}

/** A signer that signs in process with a throwaway CA and keeps each CSR it saw; its root is `rootPem`. */
export async function recordingSigner(): Promise<CsrSigner & { csrs: string[]; rootPem: string }> {
  const ca = await createSelfSignedCa({ org: "cluster.local", ttlMs: 3_600_000, keyAlgorithm: "ECDSA" });
  const csrs: string[] = [];
  return {
    csrs,
    rootPem: ca.certificatePem,
    async sign(csrPem, ttlSeconds) {
      csrs.push(csrPem);
      const leaf = await issueCertificate(ca, {
        csr: csrPem,
        uris: ["spiffe://cluster.local/ns/default/sa/default"],
        ttlMs: ttlSeconds * 1000,
      });
      return [certificatesToPem([leaf]), ca.certificatePem];
    },
  };
}
