/**
 * Test support: the orchestrator's CSR signer, played by a test against the test API server. When a
 * CertificateSigningRequest of `signerName` is approved, `issue` is asked for its certificate (PEM, leaf
 * first) and the answer goes into `status.certificate`, as the orchestrator's signer controller does; `issue`
 * answering `undefined` leaves it unsigned, `"deny"` adds a `Denied` condition. Only tests import this file.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { ApiObject, OrchApiServer } from "./orch_api_server.ts";

/** What the test signer does with one approved CSR, given its PEM request. */
export type TestIssue = (csrPem: string) => Promise<string | "deny" | undefined>;

const CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

/** Plays `signerName` on `api` (taking its `intercept`); returns the names of the CSRs it saw approved. */
export function playSigner(
  api: OrchApiServer,
  signerName: string,
  issue: TestIssue,
): { readonly approved: string[] } {
  const approved: string[] = [];
  api.intercept = (request, path) => {
    const match = path.match(
      /^\/apis\/certificates\.k8s\.io\/v1\/certificatesigningrequests\/([^/]+)\/approval$/,
    );
    if (request.method !== "PUT" || match === null) return undefined;
    // After the server stored the approval, as a controller acts on the change it watched.
    setTimeout(() => void sign(match[1]), 0);
    return undefined;
  };
  const sign = async (name: string) => {
    const response = await fetch(`${api.url}${CSRS}/${name}`);
    if (response.status !== 200) return void await response.body?.cancel();
    const csr = await response.json() as ApiObject & {
      spec: { request: string; signerName: string };
      status?: { conditions?: { type: string }[] };
    };
    if (csr.spec.signerName !== signerName || !csr.status?.conditions?.some((c) => c.type === "Approved")) {
      return;
    }
    approved.push(name);
    const answer = await issue(Buffer.from(csr.spec.request, "base64").toString("utf8"));
    if (answer === undefined) return;
    const status = answer === "deny"
      ? {
        ...csr.status,
        conditions: [...csr.status.conditions, { type: "Denied", status: "True", message: "not ours" }],
      }
      : { ...csr.status, certificate: Buffer.from(answer).toString("base64") };
    try {
      api.apply({ ...csr, status }, "status");
    } catch {
      // Deleted meanwhile: the client gave up on it.
    }
  };
  return { approved };
}
