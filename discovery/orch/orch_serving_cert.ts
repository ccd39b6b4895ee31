/**
 * `DISCOVERY_CERT_PROVIDER=orchestrator` (the reference's `kubernetes`): the discovery server's own serving
 * certificate (secure xDS port, webhooks) is signed by the orchestrator's CA through its CSR API, as the
 * reference's `GenKeyCertK8sCA` does, instead of by the built-in CA; its roots are the orchestrator's CA,
 * mounted beside the service account token, and they are what the webhook configurations' caBundle carries.
 *
 * @module
 */
import type { ExternalSigner } from "../model/external_signer.ts";
import { createCertificateRequest, exportPrivateKeyPem, generateKeyPair } from "@mesh/shared/pki";

/** The provider values that select the orchestrator's CA. */
export const ORCH_CERT_PROVIDERS: readonly string[] = ["orchestrator", "kubernetes"];
/** Where the orchestrator mounts its CA beside the service account token (relative, as the reference). */
export const ORCH_CA_FILE = "./var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
/** The signer the reference's CSRs fall to (they name none): the orchestrator's own CA. */
export const ORCH_SERVING_SIGNER = "kubernetes.io/legacy-unknown";

/** A serving certificate: chain (leaf first, without the root), key, and the roots it leads to. */
export interface IssuedServingCert {
  readonly cert: string;
  readonly key: string;
  readonly caPem: string;
}

/**
 * Issues serving certificates for DNS names through `signer` (the orchestrator's CSR API), `caPem` being
 * the orchestrator's CA the chains lead to.
 */
export function orchServingCertIssuer(
  signer: ExternalSigner,
  caPem: string,
  ttlMs: number,
): (dnsNames: readonly string[]) => Promise<IssuedServingCert> {
  return async (dnsNames) => {
    const keys = await generateKeyPair({ algorithm: "RSA" });
    const csrPem = await createCertificateRequest(keys, { dnsNames });
    const chain = await signer.sign({ csrPem, identities: [], ttlMs });
    return {
      cert: chain.slice(0, -1).join("") || chain[0],
      key: await exportPrivateKeyPem(keys.privateKey),
      caPem,
    };
  };
}
