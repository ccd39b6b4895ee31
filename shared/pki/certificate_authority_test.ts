import assert from "node:assert/strict";
import { createSelfSignedCa, loadCertificateAuthority } from "./certificate_authority.ts";
import { certificatesToPem } from "./certificate_pem.ts";
import { issueCertificate } from "./issue_certificate.ts";
import { describeKey, generateKeyPair } from "./key_pair.ts";
import { exportPrivateKeyPem } from "./private_key_pem.ts";
import { certificateText, opensslOk, verifyChain, withTempDir } from "../testing/openssl.ts";
import { needs, OPENSSL } from "../testing/system_tools.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

Deno.test("createSelfSignedCa makes a root CA that openssl accepts", needs(OPENSSL), async (t) => {
  const now = new Date("2030-01-02T03:04:05Z");
  const ca = await createSelfSignedCa({ org: "cluster.local", ttlMs: 10 * 365 * DAY_MS, now });
  const text = await certificateText(ca.certificatePem);

  await t.step("subject and issuer are the organization", () => {
    assert.match(text, /Issuer: O = cluster.local\n/);
    assert.match(text, /Subject: O = cluster.local\n/);
  });
  await t.step("basicConstraints CA:TRUE is critical and keyUsage allows signing certificates", () => {
    assert.match(text, /X509v3 Basic Constraints: critical\n\s+CA:TRUE/);
    assert.match(text, /X509v3 Key Usage: critical\n\s+Certificate Sign, CRL Sign/);
    assert.match(text, /X509v3 Subject Key Identifier/);
  });
  await t.step("RSA 2048 by default, signed with SHA-256", () => {
    assert.match(text, /Public-Key: \(2048 bit\)/);
    assert.match(text, /Signature Algorithm: sha256WithRSAEncryption/);
    assert.equal(describeKey(ca.keys.privateKey), "RSA 2048");
  });
  await t.step("valid for the TTL from the issuing time, backdated a minute for clock skew", () => {
    assert.equal(ca.certificate.notAfter.toISOString(), "2039-12-31T03:04:05.000Z");
    assert.equal(ca.certificate.notBefore.toISOString(), "2030-01-02T03:03:05.000Z");
  });
  await t.step("openssl verifies it as its own trust anchor", async () => {
    await withTempDir(async (dir) => {
      const result = await verifyChain(dir, ca.certificatePem, ca.certificatePem, [
        "-attime",
        String(now.getTime() / 1000 + 3600),
      ]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /: OK/);
    });
  });
});

Deno.test("createSelfSignedCa honours key options and rejects bad ones", needs(OPENSSL), async (t) => {
  await t.step("a configured RSA key size", async () => {
    const ca = await createSelfSignedCa({
      org: "example.org",
      ttlMs: DAY_MS,
      keySize: 3072,
      commonName: "Root",
    });
    const text = await certificateText(ca.certificatePem);
    assert.match(text, /Public-Key: \(3072 bit\)/);
    assert.match(text, /Subject: O = example.org, CN = Root\n/);
  });
  await t.step("ECDSA P-256", async () => {
    const ca = await createSelfSignedCa({ org: "example.org", ttlMs: DAY_MS, keyAlgorithm: "ECDSA" });
    const text = await certificateText(ca.certificatePem);
    assert.match(text, /NIST CURVE: P-256/);
    assert.match(text, /Signature Algorithm: ecdsa-with-SHA256/);
  });
  await t.step("a TTL that is not positive", async () => {
    await assert.rejects(createSelfSignedCa({ org: "x", ttlMs: 0 }), {
      name: "RangeError",
      message: "Invalid TTL for the self-signed CA: expected a positive number of milliseconds, got 0",
    });
  });
  await t.step("an empty organization", async () => {
    await assert.rejects(createSelfSignedCa({ org: "", ttlMs: DAY_MS }), { name: "RangeError" });
  });
});

Deno.test("loadCertificateAuthority loads a CA from PEM and checks it", needs(OPENSSL), async (t) => {
  const ca = await createSelfSignedCa({ org: "cluster.local", ttlMs: DAY_MS, keyAlgorithm: "ECDSA" });
  const keyPem = await exportPrivateKeyPem(ca.keys.privateKey);

  await t.step("our own CA round-trips and can still sign", async () => {
    const loaded = await loadCertificateAuthority(ca.certificatePem, keyPem);
    assert.equal(loaded.certificatePem, ca.certificatePem);
    const leafKeys = await generateKeyPair({ algorithm: "ECDSA" });
    const leaf = await issueCertificate(loaded, {
      dnsNames: ["a.b"],
      publicKey: leafKeys.publicKey,
      ttlMs: 60_000,
    });
    await withTempDir(async (dir) => {
      const result = await verifyChain(dir, ca.certificatePem, certificatesToPem([leaf]));
      assert.equal(result.code, 0, result.stderr);
    });
  });
  await t.step("a CA made by openssl (PKCS#1 key) issues certificates openssl verifies", async () => {
    await withTempDir(async (dir) => {
      await opensslOk([
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/O=plugged.example",
        "-days",
        "2",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign",
        "-keyout",
        `${dir}/ca-key.pem`,
        "-out",
        `${dir}/ca-cert.pem`,
      ]); // deno-fmt-ignore
      const pkcs1 = await opensslOk(["pkey", "-in", `${dir}/ca-key.pem`, "-traditional"]);
      assert.match(pkcs1, /BEGIN RSA PRIVATE KEY/);
      const caPem = await Deno.readTextFile(`${dir}/ca-cert.pem`);
      const plugged = await loadCertificateAuthority(caPem, pkcs1, {
        certificate: "ca-cert.pem",
        key: "ca-key.pem",
      });
      const leafKeys = await generateKeyPair({ algorithm: "ECDSA" });
      const leaf = await issueCertificate(plugged, {
        uris: ["spiffe://plugged.example/ns/default/sa/app"],
        publicKey: leafKeys.publicKey,
        ttlMs: 3_600_000,
      });
      const result = await verifyChain(dir, caPem, certificatesToPem([leaf]));
      assert.equal(result.code, 0, result.stderr);
    });
  });
  await t.step("a key that is not the CA's is rejected", async () => {
    const other = await exportPrivateKeyPem((await generateKeyPair({ algorithm: "ECDSA" })).privateKey);
    await assert.rejects(
      loadCertificateAuthority(ca.certificatePem, other, { certificate: "ca-cert.pem", key: "ca-key.pem" }),
      { name: "TypeError", message: "Key in ca-key.pem does not match the certificate in ca-cert.pem" },
    );
  });
  await t.step("a leaf certificate is not a CA", async () => {
    const leafKeys = await generateKeyPair({ algorithm: "ECDSA" });
    const leaf = await issueCertificate(ca, {
      dnsNames: ["a.b"],
      publicKey: leafKeys.publicKey,
      ttlMs: 60_000,
    });
    await assert.rejects(
      loadCertificateAuthority(certificatesToPem([leaf]), await exportPrivateKeyPem(leafKeys.privateKey)),
      {
        name: "TypeError",
        message: "Certificate in CA certificate is not a CA: basicConstraints CA is not set",
      },
    );
  });
});
