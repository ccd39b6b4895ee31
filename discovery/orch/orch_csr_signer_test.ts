import assert from "node:assert/strict";
import {
  certificatesToPem,
  createCertificateRequest,
  generateKeyPair,
  issueCertificate,
  parseCertificatesPem,
} from "@mesh/shared/pki";
import { OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { playSigner, type TestIssue } from "@mesh/shared/testing/orch_test_signer";
import { makePluggedInCa, type PluggedInCa } from "@mesh/shared/testing/plugged_in_ca";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { ExternalSignerError } from "../model/external_signer.ts";
import { loadOrchConfig } from "./orch_client.ts";
import { OrchCsrSigner } from "./orch_csr_signer.ts";
import { orchHttp } from "./orch_http.ts";

const SIGNER = "example.com/mesh-workloads";
const RATINGS = "spiffe://cluster.local/ns/shop/sa/ratings";
const CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

async function withSigner(
  issue: (ca: PluggedInCa) => TestIssue,
  test: (
    ctx: { api: OrchApiServer; signer: OrchCsrSigner; ca: PluggedInCa; approved: string[] },
  ) => Promise<void>,
  options: { timeoutMs?: number; rootsPem?: string } = {},
): Promise<void> {
  const api = OrchApiServer.start();
  const ca = await makePluggedInCa(24 * 3_600_000);
  const { approved } = playSigner(api, SIGNER, issue(ca));
  const dir = await Deno.makeTempDir({ prefix: "orch_csr_signer_" });
  await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
  const signer = new OrchCsrSigner({
    http: orchHttp(loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }), 2_000),
    signerName: SIGNER,
    rootsPem: options.rootsPem ?? ca.files["root-cert.pem"],
    log: new RecordingLogger(),
    pollMs: 20,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
  try {
    await test({ api, signer, ca, approved });
  } finally {
    await Deno.remove(dir, { recursive: true });
    await api.close();
  }
}

const signWith = (ca: PluggedInCa): TestIssue => async (csrPem) =>
  certificatesToPem([
    await issueCertificate(ca.intermediate, { csr: csrPem, uris: [RATINGS], ttlMs: 3_600_000 }),
  ]) +
  ca.files["ca-cert.pem"];

async function csr(): Promise<string> {
  return await createCertificateRequest(await generateKeyPair({ algorithm: "ECDSA" }), { uris: [RATINGS] });
}

Deno.test("OrchCsrSigner creates and approves a CSR, answers the signed chain with the root, and deletes it", async () => {
  await withSigner(signWith, async ({ api, signer, ca, approved }) => {
    const chain = await signer.sign({ csrPem: await csr(), identities: [RATINGS], ttlMs: 3_600_000 });
    assert.equal(chain.length, 3);
    assert.equal(chain[1], ca.files["ca-cert.pem"]);
    assert.equal(chain[2], ca.files["root-cert.pem"]);
    assert.match(parseCertificatesPem(chain[0])[0].getExtension("2.5.29.17")!.toString(), /ratings/);
    assert.equal(approved.length, 1);
    assert.match(approved[0], /^csr-workload-[a-z0-9]{18}$/);
    const created = api.requests.find((r) => r.startsWith(`POST ${CSRS}`));
    assert.ok(created, "the CSR was created through the API");
    assert.ok(
      api.requests.includes(`PUT ${CSRS}/${approved[0]}/approval`),
      "and approved through its subresource",
    );
    assert.ok(api.requests.includes(`DELETE ${CSRS}/${approved[0]}`), "and deleted once signed");
    const gone = await fetch(`${api.url}${CSRS}/${approved[0]}`);
    await gone.body?.cancel();
    assert.equal(gone.status, 404);
  });
});

Deno.test("OrchCsrSigner gives up after its timeout with a clear error and deletes the CSR", async () => {
  await withSigner(() => () => Promise.resolve(undefined), async ({ api, signer, approved }) => {
    await assert.rejects(
      () => signer.sign({ csrPem: "", identities: [RATINGS], ttlMs: 3_600_000 }),
      (e: ExternalSignerError) =>
        e instanceof ExternalSignerError && e.reason === "timeout" &&
        e.message.includes(`Signer "${SIGNER}" did not sign CSR "csr-workload-`) &&
        e.message.includes("ORCH_SIGNER"),
    );
    assert.equal(approved.length, 1);
    assert.ok(api.requests.includes(`DELETE ${CSRS}/${approved[0]}`));
  }, { timeoutMs: 200 });
});

Deno.test("OrchCsrSigner reports a CSR the signer denied", async () => {
  await withSigner(() => () => Promise.resolve("deny"), async ({ signer }) => {
    await assert.rejects(
      async () => signer.sign({ csrPem: await csr(), identities: [RATINGS], ttlMs: 3_600_000 }),
      (e: ExternalSignerError) =>
        e.reason === "denied" && /refused CSR "csr-workload-\w+" \(Denied: not ours\)/.test(e.message),
    );
  });
});

Deno.test("OrchCsrSigner refuses a certificate that does not lead to the external CA's root", async () => {
  const other = await makePluggedInCa(24 * 3_600_000);
  await withSigner(signWith, async ({ signer }) => {
    await assert.rejects(
      async () => signer.sign({ csrPem: await csr(), identities: [RATINGS], ttlMs: 3_600_000 }),
      (e: ExternalSignerError) =>
        e.reason === "failed" && /does not lead to the external CA's root/.test(e.message),
    );
  }, { rootsPem: other.files["root-cert.pem"] });
});
