/**
 * A registration authority in front of an external CA (`EXTERNAL_CA`): the CA service checks the caller and
 * its CSR as always, then hands the CSR to an `ExternalSigner` (`model/external_signer.ts`) instead of signing it. The CSR is forwarded as it came, so every
 * identity it names must be one the caller proved, as the reference checks before it forwards.
 *
 * @module
 */
import { parseCertificateRequestPem, subjectAltNamesOf } from "@mesh/shared/pki";
import type { EnvSettings } from "@mesh/shared/env/env_settings";
import { CaRequestError, type SigningPolicy } from "./ca_signer.ts";

/** The `EXTERNAL_CA` value that forwards CSRs to the orchestrator's CertificateSigningRequest API. */
export const EXTERNAL_CA_ORCH = "MESHD_RA_ORCH_API";

/**
 * Checks a CSR before it is forwarded: it parses, its self-signature holds, every URI it names is one of the
 * caller's `identities`, and the lifetime asked for is within the policy. Returns the lifetime to ask for.
 *
 * @throws {CaRequestError} `csr_parsing` for a malformed CSR or one naming an identity not proved, `ttl`
 */
export async function checkForwardedCsr(
  csrPem: string,
  validitySeconds: number,
  identities: readonly string[],
  policy: SigningPolicy,
): Promise<number> {
  const ttlMs = validitySeconds > 0 ? validitySeconds * 1000 : policy.defaultTtlMs;
  if (ttlMs > policy.maxTtlMs) {
    throw new CaRequestError(
      "ttl",
      `validity_duration ${validitySeconds}s is above MAX_WORKLOAD_CERT_TTL (${policy.maxTtlMs / 1000}s)`,
    );
  }
  let uris: readonly string[];
  try {
    uris = subjectAltNamesOf(await parseCertificateRequestPem(csrPem, "the request's csr field")).uris;
  } catch (cause) {
    throw new CaRequestError("csr_parsing", (cause as Error).message, { cause });
  }
  const unproved = uris.filter((uri) => !identities.includes(uri));
  if (unproved.length > 0) {
    throw new CaRequestError(
      "csr_parsing",
      `The CSR names ${unproved.map((u) => `"${u.slice(0, 200)}"`).join(", ")}, which the caller did not ` +
        `prove: expected only ${identities.map((i) => `"${i}"`).join(", ")}`,
    );
  }
  return ttlMs;
}

/** `EXTERNAL_CA` and `ORCH_SIGNER`, checked: the orchestrator signer's name, or undefined to sign here. */
export function externalCaFromEnv(env: EnvSettings): { readonly signerName: string } | undefined {
  const type = env.string("EXTERNAL_CA");
  if (type === "") return undefined;
  if (type !== EXTERNAL_CA_ORCH) {
    throw new RangeError(
      `EXTERNAL_CA="${type.slice(0, 100)}" is not supported: expected "${EXTERNAL_CA_ORCH}" or empty`,
    );
  }
  const signerName = env.string("ORCH_SIGNER");
  if (signerName === "") {
    throw new RangeError(
      `ORCH_SIGNER is empty: EXTERNAL_CA=${EXTERNAL_CA_ORCH} needs the signerName of the orchestrator's ` +
        'signer, such as "example.com/mesh-workloads"',
    );
  }
  return { signerName };
}
