import assert from "node:assert/strict";
import { certificateCertifiesKey, parseCertificateFactsPem } from "./certificate_facts.ts";
import { parseCertificatesPem } from "./certificate_pem.ts";
import { createSelfSignedCa } from "./certificate_authority.ts";
import { issueCertificate } from "./issue_certificate.ts";
import { generateKeyPair } from "./key_pair.ts";
import { certificatesToPem } from "./certificate_pem.ts";

Deno.test("parseCertificateFactsPem reads the validity and key x509 reads, for each certificate of a chain", async () => {
  const ca = await createSelfSignedCa({ org: "cluster.local", ttlMs: 86_400_000, keyAlgorithm: "ECDSA" });
  const keys = await generateKeyPair({ algorithm: "RSA" });
  const leaf = await issueCertificate(ca, {
    publicKey: keys.publicKey,
    uris: ["spiffe://a/ns/b/sa/c"],
    ttlMs: 3_600_000,
  });
  const pem = certificatesToPem([leaf]) + ca.certificatePem;
  const facts = parseCertificateFactsPem(pem, "chain.pem");
  const parsed = parseCertificatesPem(pem, "chain.pem");
  assert.equal(facts.length, 2);
  for (const [i, certificate] of parsed.entries()) {
    assert.equal(facts[i].notBefore.getTime(), certificate.notBefore.getTime());
    assert.equal(facts[i].notAfter.getTime(), certificate.notAfter.getTime());
    assert.deepEqual(facts[i].spki, new Uint8Array(certificate.publicKey.rawData));
  }
  assert.equal(await certificateCertifiesKey(facts[0], keys.publicKey), true);
  assert.equal(await certificateCertifiesKey(facts[1], keys.publicKey), false);
});

Deno.test("parseCertificateFactsPem refuses a block that is not a certificate, naming the source", () => {
  const garbage = "-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n";
  assert.throws(() => parseCertificateFactsPem(garbage, "cert-chain.pem"), SyntaxError);
  assert.throws(() => parseCertificateFactsPem("nothing", "cert-chain.pem"), /cert-chain.pem/);
});
