/**
 * Workload CSRs signed through the orchestrator's `certificates.k8s.io/v1` CertificateSigningRequest API
 * (`EXTERNAL_CA=MESHD_RA_ORCH_API`, signer `ORCH_SIGNER`), as the reference's registration authority does:
 * create a CSR object named `csr-workload-<random>` (an existing one of that name is deleted and created
 * again), approve it through its `approval` subresource, read it until the signer filled
 * `status.certificate` or refused it, then delete it. The chain must lead to the external CA's root, which is
 * appended. Every request has its own deadline and the whole signing `timeoutMs`; past it the workload is
 * told which CSR and signer did not answer.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { Logger } from "@mesh/shared/log/logger";
import { parseCertificatesPem, type X509Certificate } from "@mesh/shared/pki";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import {
  type ExternalSigner,
  ExternalSignerError,
  type ExternalSignRequest,
} from "../model/external_signer.ts";
import type { OrchHttp, OrchHttpResponse } from "./orch_http.ts";

/** How long one CSR may take from creation to certificate unless told otherwise. */
export const CSR_SIGN_TIMEOUT_MS = 30_000;
/** How often a CSR is read while its certificate is awaited (the reference's read interval). */
export const CSR_POLL_MS = 500;

const CSR_PATH = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

/** What the signer needs. */
export interface OrchCsrSignerOptions {
  readonly http: OrchHttp;
  /** `ORCH_SIGNER`: the `spec.signerName` of every CSR. */
  readonly signerName: string;
  /** The external CA's root certificates, PEM: the chain must lead to one, and the first is appended. */
  readonly rootsPem: string;
  readonly log: Logger;
  readonly timers?: Timers;
  /** The longest one signing may take (default {@link CSR_SIGN_TIMEOUT_MS}). */
  readonly timeoutMs?: number;
  /** The read interval (default {@link CSR_POLL_MS}). */
  readonly pollMs?: number;
}

type CsrObject = {
  metadata?: { name?: string; resourceVersion?: string };
  status?: {
    certificate?: string;
    conditions?: { type?: string; status?: string; reason?: string; message?: string }[];
  };
};

/** A random CSR name, as the reference's `csr-workload-` and 18 lower-case letters and digits. */
function csrName(): string {
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return `csr-workload-${[...bytes].map((b) => alphabet[b % alphabet.length]).join("")}`;
}

function failed(what: string, answer: OrchHttpResponse): ExternalSignerError {
  const message = (answer.body as { message?: unknown } | undefined)?.message;
  return new ExternalSignerError(
    "failed",
    `${what} answered ${answer.status}${typeof message === "string" ? `: ${message.slice(0, 200)}` : ""}`,
  );
}

/** Signs CSRs through the orchestrator; one per CA. */
export class OrchCsrSigner implements ExternalSigner {
  readonly #options: OrchCsrSignerOptions;
  readonly #timers: Timers;
  readonly #roots: X509Certificate[];

  /** Throws SyntaxError when `rootsPem` holds no certificate. */
  constructor(options: OrchCsrSignerOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
    this.#roots = parseCertificatesPem(options.rootsPem, "the external CA's root certificate");
  }

  /** Has the orchestrator's signer sign `csrPem`; resolves with the chain, leaf first and root last. */
  async sign(request: ExternalSignRequest, signal?: AbortSignal): Promise<string[]> {
    const name = csrName();
    const deadline = this.#timers.now() + (this.#options.timeoutMs ?? CSR_SIGN_TIMEOUT_MS);
    let created = false;
    try {
      const csr = await this.#create(name, request.csrPem, request.ttlMs);
      created = true;
      await this.#approve(name, csr);
      const certificatePem = await this.#awaitCertificate(name, deadline, signal);
      return await this.#chain(name, certificatePem);
    } finally {
      if (created) await this.#delete(name);
    }
  }

  async #create(name: string, csrPem: string, ttlMs: number): Promise<CsrObject> {
    const body = {
      apiVersion: "certificates.k8s.io/v1",
      kind: "CertificateSigningRequest",
      metadata: { name },
      spec: {
        request: Buffer.from(csrPem).toString("base64"),
        signerName: this.#options.signerName,
        groups: ["system:authenticated"],
        usages: ["digital signature", "key encipherment", "server auth", "client auth"],
        expirationSeconds: Math.max(600, Math.round(ttlMs / 1000)),
      },
    };
    let answer = await this.#call({ method: "POST", path: CSR_PATH, body }, `creating CSR "${name}"`);
    if (answer.status === 409) {
      await this.#delete(name);
      answer = await this.#call({ method: "POST", path: CSR_PATH, body }, `creating CSR "${name}"`);
    }
    if (answer.status !== 201 && answer.status !== 200) throw failed(`Creating CSR "${name}"`, answer);
    return answer.body as CsrObject;
  }

  async #approve(name: string, csr: CsrObject): Promise<void> {
    const message = `CSR (${name}) for the certificate () is approved`;
    const approved = {
      ...csr,
      status: {
        ...csr.status,
        conditions: [
          ...(csr.status?.conditions ?? []),
          { type: "Approved", status: "True", reason: message, message },
        ],
      },
    };
    const answer = await this.#call(
      { method: "PUT", path: `${CSR_PATH}/${name}/approval`, body: approved },
      `approving CSR "${name}"`,
    );
    if (answer.status !== 200) throw failed(`Approving CSR "${name}"`, answer);
  }

  async #awaitCertificate(name: string, deadline: number, signal?: AbortSignal): Promise<string> {
    while (true) {
      const answer = await this.#call(
        { method: "GET", path: `${CSR_PATH}/${name}` },
        `reading CSR "${name}"`,
      );
      if (answer.status !== 200) throw failed(`Reading CSR "${name}"`, answer);
      const csr = answer.body as CsrObject;
      const refused = csr.status?.conditions?.find((c) => c.type === "Denied" || c.type === "Failed");
      if (refused !== undefined) {
        throw new ExternalSignerError(
          "denied",
          `Signer "${this.#options.signerName}" refused CSR "${name}" (${refused.type}: ${
            String(refused.message ?? refused.reason ?? "no message").slice(0, 200)
          })`,
        );
      }
      if (csr.status?.certificate) return Buffer.from(csr.status.certificate, "base64").toString("utf8");
      const left = deadline - this.#timers.now();
      if (left <= 0 || signal?.aborted) {
        throw new ExternalSignerError(
          "timeout",
          `Signer "${this.#options.signerName}" did not sign CSR "${name}" within ${
            this.#options.timeoutMs ?? CSR_SIGN_TIMEOUT_MS
          } ms: expected the orchestrator's signer (ORCH_SIGNER) to fill its status.certificate`,
        );
      }
      await new Promise<void>((resolve) =>
        this.#timers.setTimeout(resolve, Math.min(left, this.#options.pollMs ?? CSR_POLL_MS))
      );
    }
  }

  /** The signed chain followed by the root it leads to; each certificate must be signed by the next. */
  async #chain(name: string, certificatePem: string): Promise<string[]> {
    let chain: X509Certificate[];
    try {
      chain = parseCertificatesPem(certificatePem, `the certificate of CSR "${name}"`);
    } catch (cause) {
      throw new ExternalSignerError("failed", (cause as Error).message, { cause });
    }
    for (let i = 0; i + 1 < chain.length; i++) {
      if (!(await chain[i].verify({ publicKey: chain[i + 1], signatureOnly: true }))) {
        throw new ExternalSignerError(
          "failed",
          `The certificate of CSR "${name}" is not a chain: entry ${i} is not signed by the next`,
        );
      }
    }
    const last = chain.at(-1)!;
    const root = await this.#rootOf(last);
    if (root === undefined) {
      throw new ExternalSignerError(
        "failed",
        `The certificate of CSR "${name}" does not lead to the external CA's root (--caCertFile): issued by ` +
          `"${last.issuer.slice(0, 200)}"`,
      );
    }
    const pem = (c: X509Certificate) => c.toString("pem").trim() + "\n";
    return [...chain.filter((c) => !c.equal(root)).map(pem), pem(root)];
  }

  async #rootOf(last: X509Certificate): Promise<X509Certificate | undefined> {
    for (const root of this.#roots) {
      if (last.equal(root)) return root;
      if (await last.verify({ publicKey: root, signatureOnly: true }).catch(() => false)) return root;
    }
    return undefined;
  }

  async #delete(name: string): Promise<void> {
    try {
      await this.#options.http({ method: "DELETE", path: `${CSR_PATH}/${name}` });
    } catch (error) {
      this.#options.log.warn("CSR not deleted", { csr: name, error: (error as Error).message });
    }
  }

  async #call(
    request: Parameters<OrchHttp>[0],
    what: string,
  ): Promise<OrchHttpResponse> {
    try {
      return await this.#options.http(request);
    } catch (cause) {
      throw new ExternalSignerError(
        "failed",
        `The orchestrator failed ${what}: ${(cause as Error).message}`,
        { cause },
      );
    }
  }
}
