/**
 * The signing policy of the CA: the certificate names the caller's authenticated identity and nothing the CSR
 * asks for; its lifetime is the request's (or `DEFAULT_WORKLOAD_CERT_TTL` when it asks for none), never above
 * `MAX_WORKLOAD_CERT_TTL` and never beyond the CA's own expiry.
 *
 * @module
 */
import { certificatesToPem, issueCertificate, parseCertificateRequestPem } from "@mesh/shared/pki";
import type { CaKeyMaterial } from "./ca_keys.ts";

/** Why a request cannot be signed; `code` is the gRPC status the caller gets. */
export class CaRequestError extends Error {
  /** `reason` names the metric outcome: `csr_too_large`, `csr_parsing`, `ttl` or `sign`. */
  constructor(
    readonly reason: "csr_too_large" | "csr_parsing" | "ttl" | "sign",
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "CaRequestError";
  }
}

/** The TTL limits of workload certificates. */
export interface SigningPolicy {
  /** `DEFAULT_WORKLOAD_CERT_TTL`, in milliseconds. */
  readonly defaultTtlMs: number;
  /** `MAX_WORKLOAD_CERT_TTL`, in milliseconds. */
  readonly maxTtlMs: number;
}

/** One request to sign. */
export interface SignRequest {
  /** The PEM CSR. */
  readonly csrPem: string;
  /** `validity_duration`, in seconds; ≤ 0 asks for the default. */
  readonly validitySeconds: number;
  /** The caller's authenticated SPIFFE identities: the certificate's URI SANs. */
  readonly identities: readonly string[];
}

/**
 * Refuses a CSR whose PEM text is longer than `maxBytes`, before any of it is decoded: parsing costs event-loop
 * time in proportion to the size, and a workload's CSR is about a kilobyte.
 *
 * @throws {CaRequestError} `csr_too_large`, naming the limit
 */
export function checkCsrSize(csrPem: string, maxBytes: number): void {
  if (csrPem.length > maxBytes) {
    throw new CaRequestError(
      "csr_too_large",
      `CSR of ${csrPem.length} bytes is too large: expected at most ${maxBytes} bytes (CASERVER_CSR_MAX_BYTES)`,
    );
  }
}

/**
 * Signs a CSR; returns the chain, leaf first and root last (PEM, one certificate per entry).
 *
 * @throws {CaRequestError} for a malformed or mis-signed CSR, a TTL above the maximum, or a signing failure
 */
export async function signCsr(
  request: SignRequest,
  keys: CaKeyMaterial,
  policy: SigningPolicy,
  now: Date,
): Promise<string[]> {
  const ttlMs = request.validitySeconds > 0 ? request.validitySeconds * 1000 : policy.defaultTtlMs;
  if (ttlMs > policy.maxTtlMs) {
    throw new CaRequestError(
      "ttl",
      `validity_duration ${request.validitySeconds}s is above MAX_WORKLOAD_CERT_TTL (${
        policy.maxTtlMs / 1000
      }s)`,
    );
  }
  let csr;
  try {
    csr = await parseCertificateRequestPem(request.csrPem, "the request's csr field");
  } catch (cause) {
    throw new CaRequestError("csr_parsing", (cause as Error).message, { cause });
  }
  try {
    const leaf = await issueCertificate(keys.signer, { csr, ttlMs, uris: [...request.identities], now });
    return [certificatesToPem([leaf]), ...keys.chainPem];
  } catch (cause) {
    throw new CaRequestError("sign", `Cannot sign: ${(cause as Error).message}`, { cause });
  }
}
