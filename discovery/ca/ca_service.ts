/**
 * The CA's gRPC service: authenticate the caller, sign its CSR for the identity it proved, answer with the
 * chain. Served under our service name and Istio's. Every outcome is counted in the `ca_server_*` metrics.
 *
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../shared/log/logger.ts";
import type { Metrics } from "../../shared/metrics/metrics.ts";
import { peerCertificateChainDer, peerCertificateDer } from "../../shared/grpc/mod.ts";
import type { GrpcService } from "../../shared/grpc/mod.ts";
import {
  caServiceDefinition,
  type CertificateRequestMessage,
  type CertificateResponseMessage,
  ISTIO_CA_SERVICE,
  MESH_CA_SERVICE,
} from "../../proto/ca_service.ts";
import { authenticateCaller, AuthenticationError, type CallerAuthenticator } from "./caller_authenticator.ts";
import type { CaKeyStore } from "./ca_keys.ts";
import { CaRequestError, signCsr, type SigningPolicy } from "./ca_signer.ts";

/** What the CA service needs. */
export interface CaServiceDeps {
  /** The signing key material. */
  readonly keys: CaKeyStore;
  /** TTL limits. */
  readonly policy: SigningPolicy;
  /** Authenticators, in order. */
  readonly authenticators: readonly CallerAuthenticator[];
  /** The clock. */
  readonly now: () => Date;
  /** Logger of the CA. */
  readonly log: Logger;
  /** Where `ca_server_*` go. */
  readonly metrics?: Metrics;
}

/** Signs one call's request; the status error a failure maps to. */
export async function handleCreateCertificate(
  deps: CaServiceDeps,
  request: CertificateRequestMessage,
  credentials: { peerCertificateDer?: Uint8Array; authorization: string[] },
): Promise<CertificateResponseMessage> {
  const count = (name: string) => deps.metrics?.counter(name).inc();
  count("ca_server_csr_count");
  let identities: string[];
  try {
    identities = await authenticateCaller(deps.authenticators, credentials);
  } catch (error) {
    count("ca_server_authentication_failure_count");
    if (error instanceof AuthenticationError && error.identityMissing) {
      count("ca_server_id_extraction_err_count");
    }
    throw Object.assign(new Error(`Unauthenticated: ${(error as AuthenticationError).message}`), {
      code: grpc.status.UNAUTHENTICATED,
    });
  }
  try {
    const chain = await signCsr(
      { csrPem: request.csr, validitySeconds: request.validityDuration, identities },
      deps.keys.current,
      deps.policy,
      deps.now(),
    );
    count("ca_server_success_cert_issuance_count");
    return { certChain: chain };
  } catch (error) {
    if (error instanceof CaRequestError) {
      count(error.reason === "sign" ? "ca_server_csr_sign_err_count" : "ca_server_csr_parsing_err_count");
      deps.log.warn("CA refused a request", { identities, reason: error.reason, error: error.message });
      throw Object.assign(new Error(error.message), {
        code: error.reason === "sign" ? grpc.status.INTERNAL : grpc.status.INVALID_ARGUMENT,
      });
    }
    throw error;
  }
}

/** The CA service under both names, for `startGrpcServer`. */
export function caGrpcServices(deps: CaServiceDeps): GrpcService[] {
  const implementation = {
    CreateCertificate(
      call: grpc.ServerUnaryCall<CertificateRequestMessage, CertificateResponseMessage>,
      callback: grpc.sendUnaryData<CertificateResponseMessage>,
    ) {
      const authorization = call.metadata.get("authorization").map(String);
      const der = peerCertificateDer(call);
      handleCreateCertificate(deps, call.request, {
        authorization,
        ...(der ? { peerCertificateDer: der, peerCertificateChainDer: peerCertificateChainDer(call) } : {}),
      }).then((response) => callback(null, response), (error) => callback(error));
    },
  };
  return [MESH_CA_SERVICE, ISTIO_CA_SERVICE].map((name) => ({
    definition: caServiceDefinition(name),
    implementation: implementation as unknown as grpc.UntypedServiceImplementation,
  }));
}
