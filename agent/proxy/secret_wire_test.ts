import assert from "node:assert/strict";
import { decodeAny } from "@mesh/proto/any_codec";
import { encodeSecretAny } from "./secret_wire.ts";

Deno.test("encodeSecretAny writes a certificate secret the schema decodes to the same object", () => {
  const secret = {
    name: "default",
    tls_certificate: {
      certificate_chain: { inline_string: "-----BEGIN CERTIFICATE-----\nA\n" },
      private_key: { inline_string: "-----BEGIN PRIVATE KEY-----\nB\n" },
    },
  };
  const decoded = decodeAny(encodeSecretAny(secret));
  assert.equal(decoded.typeUrl, "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret");
  assert.deepEqual(decoded.resource, secret);
});

Deno.test("encodeSecretAny writes a trusted CA secret the schema decodes to the same object", () => {
  const secret = { name: "ROOTCA", validation_context: { trusted_ca: { inline_string: "roots" } } };
  assert.deepEqual(decodeAny(encodeSecretAny(secret)).resource, secret);
});

Deno.test("encodeSecretAny refuses a shape it does not serve, naming the field", () => {
  assert.throws(
    () => encodeSecretAny({ name: "x", tls_certificate: { certificate_chain: { filename: "/etc/c.pem" } } }),
    /Secret.tls_certificate.certificate_chain has fields "filename": expected only "inline_string"/,
  );
  assert.throws(() => encodeSecretAny({ name: "x", generic_secret: {} }), /has fields "generic_secret"/);
});
