import assert from "node:assert/strict";
import { EnvSettings } from "@mesh/shared/env/env_settings";
import { createCertificateRequest, generateKeyPair } from "@mesh/shared/pki";
import { CaRequestError } from "./ca_signer.ts";
import { checkForwardedCsr, externalCaFromEnv } from "./forwarded_csr.ts";

const RATINGS = "spiffe://cluster.local/ns/shop/sa/ratings";
const POLICY = { defaultTtlMs: 3_600_000, maxTtlMs: 24 * 3_600_000 };

async function csrFor(uris: string[]): Promise<string> {
  return await createCertificateRequest(await generateKeyPair({ algorithm: "ECDSA" }), { uris });
}

Deno.test("A CSR is forwarded to the external CA only when it names nothing but the caller's identities", async () => {
  assert.equal(await checkForwardedCsr(await csrFor([RATINGS]), 0, [RATINGS], POLICY), 3_600_000);
  assert.equal(await checkForwardedCsr(await csrFor([RATINGS]), 7200, [RATINGS], POLICY), 7_200_000);
  await assert.rejects(
    async () =>
      checkForwardedCsr(await csrFor([RATINGS, "spiffe://cluster.local/ns/kube-system/sa/admin"]), 0, [
        RATINGS,
      ], POLICY),
    (e: CaRequestError) =>
      e.reason === "csr_parsing" && e.message.includes('"spiffe://cluster.local/ns/kube-system/sa/admin"') &&
      e.message.includes("did not prove"),
  );
  await assert.rejects(
    async () => checkForwardedCsr(await csrFor([RATINGS]), 48 * 3600, [RATINGS], POLICY),
    (e: CaRequestError) => e.reason === "ttl",
  );
  await assert.rejects(() => checkForwardedCsr("not a csr", 0, [RATINGS], POLICY), CaRequestError);
});

Deno.test("EXTERNAL_CA takes the orchestrator signer only, and it needs ORCH_SIGNER", () => {
  assert.equal(externalCaFromEnv(new EnvSettings("discovery", {})), undefined);
  assert.deepEqual(
    externalCaFromEnv(
      new EnvSettings("discovery", { EXTERNAL_CA: "MESHD_RA_ORCH_API", ORCH_SIGNER: "example.com/mesh" }),
    ),
    { signerName: "example.com/mesh" },
  );
  assert.throws(
    () => externalCaFromEnv(new EnvSettings("discovery", { EXTERNAL_CA: "MESHD_RA_ORCH_API" })),
    /ORCH_SIGNER is empty/,
  );
  assert.throws(
    () => externalCaFromEnv(new EnvSettings("discovery", { EXTERNAL_CA: "MESHD_RA_MESH_API" })),
    /EXTERNAL_CA="MESHD_RA_MESH_API" is not supported: expected "MESHD_RA_ORCH_API" or empty/,
  );
});
