/**
 * What a gRPC call offers to authenticate its caller, read once for the CA service and the secure port's stream
 * check alike.
 *
 * @module
 */
import { type PeerCall, peerCertificateChainDer, peerCertificateDer, peerHost } from "@mesh/shared/grpc";
import type { CallerCredentials } from "./caller_authenticator.ts";

/** A gRPC call whose caller is to be authenticated. */
export type CredentialedCall = PeerCall & { readonly metadata: { get(key: string): unknown[] } };

/** The call's verified client certificate and chain, `authorization` metadata and peer address. */
export function callerCredentialsOf(call: CredentialedCall): CallerCredentials {
  const der = peerCertificateDer(call);
  const peerAddress = peerHost(call);
  return {
    authorization: call.metadata.get("authorization").map(String),
    ...(der ? { peerCertificateDer: der, peerCertificateChainDer: peerCertificateChainDer(call) } : {}),
    ...(peerAddress !== undefined ? { peerAddress } : {}),
  };
}
