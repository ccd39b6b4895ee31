import "reflect-metadata";
import assert from "node:assert/strict";
import { createSelfSignedCa } from "@mesh/shared/pki";
import { parseBundleEndpoints, parseSpiffeBundle } from "./spiffe_bundle.ts";
import { derKey } from "./federated_bundles.ts";

Deno.test("parseBundleEndpoints reads trust domain and https URL tuples joined with ||", () => {
  assert.deepEqual(parseBundleEndpoints(""), []);
  assert.deepEqual(
    parseBundleEndpoints("partner.example|https://bundle.partner.example/b||other|https://10.0.0.1:8443/x"),
    [
      { trustDomain: "partner.example", url: "https://bundle.partner.example/b" },
      { trustDomain: "other", url: "https://10.0.0.1:8443/x" },
    ],
  );
});

Deno.test("parseBundleEndpoints rejects malformed entries, naming the variable and what is expected", () => {
  for (
    const [value, message] of [
      ["partner.example", /entry "partner.example": expected <trust_domain>\|<https URL>/],
      ["Partner|https://x", /trust domain "Partner": expected lowercase/],
      ["p|http://x/bundle", /must be https/],
      ["p|not a url", /URL "not a url"/],
      ["p|https://a||p|https://b", /trust domain "p" given twice/],
    ] as const
  ) {
    assert.throws(
      () => parseBundleEndpoints(value),
      (e: Error) => e instanceof RangeError && message.test(e.message),
    );
    assert.throws(() => parseBundleEndpoints(value), /SPIFFE_BUNDLE_ENDPOINTS/);
  }
});

async function bundleText(extra: Record<string, unknown> = {}) {
  const ca = await createSelfSignedCa({ org: "partner.example", ttlMs: 3_600_000, keyAlgorithm: "ECDSA" });
  const x5c = derKey(new Uint8Array(ca.certificate.rawData));
  return {
    ca,
    text: JSON.stringify({
      keys: [{ use: "jwt-svid", kty: "EC" }, { use: "x509-svid", kty: "EC", x5c: [x5c] }],
      ...extra,
    }),
  };
}

Deno.test("parseSpiffeBundle reads the x509-svid authorities and the refresh hint, skipping JWT keys", async () => {
  const { ca, text } = await bundleText({ spiffe_refresh_hint: 600, spiffe_sequence: 7 });
  const bundle = parseSpiffeBundle(text, "test bundle");
  assert.equal(bundle.x509AuthoritiesPem.length, 1);
  assert.equal(bundle.x509AuthoritiesPem[0].trim(), ca.certificatePem.trim());
  assert.equal(bundle.refreshHintSeconds, 600);
  assert.equal(bundle.sequence, 7);
});

Deno.test("parseSpiffeBundle rejects documents that are not bundles, naming the source and field", () => {
  assert.throws(() => parseSpiffeBundle("{", "b"), /^SyntaxError: b: not JSON/);
  assert.throws(() => parseSpiffeBundle("{}", "b"), /b: expected a JWK set with a "keys" array/);
  assert.throws(() => parseSpiffeBundle('{"keys":[{"use":"jwt-svid"}]}', "b"), /no x509-svid authority/);
  assert.throws(
    () => parseSpiffeBundle('{"keys":[{"use":"x509-svid","x5c":["a","b"]}]}', "b"),
    /keys\[0\]\.x5c: an x509-svid key must hold exactly one certificate/,
  );
  assert.throws(
    () => parseSpiffeBundle('{"keys":[{"use":"x509-svid","x5c":["bm90IGEgY2VydA=="]}]}', "b"),
    /keys\[0\]\.x5c\[0\]: not a base64 DER certificate/,
  );
});
