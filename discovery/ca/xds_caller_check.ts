/**
 * Who may open an ADS stream on the secure port (`XDS_AUTH`): a caller authenticated as the CA authenticates
 * callers (client certificate or JWT). With `DISCOVERY_ENABLE_XDS_IDENTITY_CHECK`, the proxy its node names must
 * be in the caller's namespace (and run as its service account, when the node says), else PERMISSION_DENIED.
 * Identities from other trust domains are refused unless they are aliases of the mesh's, federated through
 * `SPIFFE_BUNDLE_ENDPOINTS` (vouched for by that domain's bundle), or `DISCOVERY_SKIP_VALIDATE_TRUST_DOMAIN` is set.
 *
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import type { GrpcRefusal } from "@mesh/shared/grpc";
import type { Proxy } from "../model/proxy.ts";
import { authenticateCaller, type CallerAuthenticator, identityParts } from "./caller_authenticator.ts";
import { callerCredentialsOf, type CredentialedCall } from "./caller_credentials.ts";

/** Settings of the check. */
export interface XdsCallerCheckOptions {
  readonly authenticators: readonly CallerAuthenticator[];
  /** `DISCOVERY_ENABLE_XDS_IDENTITY_CHECK`. */
  readonly identityCheck: boolean;
  /** The mesh trust domain and its aliases. */
  readonly trustDomains: readonly string[];
  /** Federated trust domains (`SPIFFE_BUNDLE_ENDPOINTS`), accepted beside the mesh's; read at each call. */
  readonly federatedTrustDomains?: () => readonly string[];
  /** `DISCOVERY_SKIP_VALIDATE_TRUST_DOMAIN`. */
  readonly skipTrustDomain: boolean;
}

/** The call surface the check reads. */
export type CheckedCall = CredentialedCall;

/** Decides, for each identity the caller proved, whether it may speak for `proxy`. */
export function proxyAllowed(identities: readonly string[], proxy: Proxy): GrpcRefusal | undefined {
  const serviceAccount = proxy.metadata.serviceAccount;
  const ok = identities.some((id) => {
    const parts = identityParts(id);
    return parts.namespace === proxy.namespace &&
      (serviceAccount === undefined || serviceAccount === "" || serviceAccount === parts.serviceAccount ||
        serviceAccount === id);
  });
  return ok ? undefined : {
    code: grpc.status.PERMISSION_DENIED,
    details: `the caller is ${
      identities.join(", ")
    }, which may not speak for a proxy in namespace "${proxy.namespace}"${
      serviceAccount ? ` running as "${serviceAccount}"` : ""
    }`,
  };
}

/** A caller that proved who it is: its identities, and the check of each proxy it speaks for. */
export interface CheckedCaller {
  readonly identities: readonly string[];
  authorize(proxy: Proxy): GrpcRefusal | undefined;
}

/** The stream authenticator of the secure port. */
export function xdsCallerCheck(
  options: XdsCallerCheckOptions,
): (call: CheckedCall) => Promise<CheckedCaller | GrpcRefusal> {
  return async (call) => {
    let identities: string[];
    try {
      identities = await authenticateCaller(options.authenticators, callerCredentialsOf(call));
    } catch (error) {
      return { code: grpc.status.UNAUTHENTICATED, details: `XDS_AUTH: ${(error as Error).message}` };
    }
    if (!options.skipTrustDomain) {
      const accepted = [...options.trustDomains, ...(options.federatedTrustDomains?.() ?? [])];
      const foreign = identities.filter((id) => !accepted.includes(identityParts(id).trustDomain));
      if (foreign.length === identities.length) {
        return {
          code: grpc.status.UNAUTHENTICATED,
          details: `the caller's trust domain is neither the mesh's nor federated (${accepted.join(", ")}): ${
            foreign.join(", ")
          }`,
        };
      }
      identities = identities.filter((id) => !foreign.includes(id));
    }
    const proved = identities;
    return {
      identities: proved,
      authorize: options.identityCheck ? (proxy) => proxyAllowed(proved, proxy) : () => undefined,
    };
  };
}
