import assert from "node:assert/strict";
import { parseCertificateRequestPem } from "./certificate_request.ts";
import { generateKeyPair } from "./key_pair.ts";
import { subjectAltNamesOf } from "./subject_alt_names.ts";
import { createUriCertificateRequest } from "./uri_certificate_request.ts";

for (const algorithm of ["ECDSA", "RSA"] as const) {
  Deno.test(`createUriCertificateRequest writes a ${algorithm} request whose signature verifies and names the URI`, async () => {
    const keys = await generateKeyPair({ algorithm });
    const pem = await createUriCertificateRequest(keys, ["spiffe://cluster.local/ns/shop/sa/web"]);
    const request = await parseCertificateRequestPem(pem, "the request");
    assert.equal(request.subject, "");
    assert.deepEqual(subjectAltNamesOf(request).uris, ["spiffe://cluster.local/ns/shop/sa/web"]);
    const san = request.extensions.find((e) => e.type === "2.5.29.17");
    assert.equal(san?.critical, true, "an empty subject makes the SAN critical");
  });
}

Deno.test("createUriCertificateRequest without URIs writes a request with no extensions", async () => {
  const keys = await generateKeyPair({ algorithm: "ECDSA" });
  const request = await parseCertificateRequestPem(
    await createUriCertificateRequest(keys, []),
    "the request",
  );
  assert.equal(request.extensions.length, 0);
});
