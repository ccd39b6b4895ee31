/**
 * A CA outside this server that signs workload CSRs (`EXTERNAL_CA`): what the CA service hands a checked CSR
 * to, and what the orchestrator's CSR signer implements.
 *
 * @module
 */

/** One CSR to forward: as the caller sent it, with what the caller proved and the lifetime asked for. */
export interface ExternalSignRequest {
  readonly csrPem: string;
  readonly identities: readonly string[];
  readonly ttlMs: number;
}

/** Signs CSRs elsewhere; resolves with the chain, leaf first and root last (PEM, one certificate each). */
export interface ExternalSigner {
  /** Rejects with an {@link ExternalSignerError} when the external CA does not sign in time or refuses. */
  sign(request: ExternalSignRequest, signal?: AbortSignal): Promise<string[]>;
}

/** The external CA did not answer with a certificate; `reason` names the metric outcome. */
export class ExternalSignerError extends Error {
  /** `timeout`: no certificate in time; `denied`: the signer refused; `failed`: the API call failed. */
  constructor(readonly reason: "timeout" | "denied" | "failed", message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ExternalSignerError";
  }
}
