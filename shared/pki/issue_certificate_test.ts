import assert from "node:assert/strict";
import { x509 } from "./_x509.ts";
import { createSelfSignedCa } from "./certificate_authority.ts";
import { certificatesToPem } from "./certificate_pem.ts";
import { createCertificateRequest, parseCertificateRequestPem } from "./certificate_request.ts";
import { issueCertificate } from "./issue_certificate.ts";
import { generateKeyPair } from "./key_pair.ts";
import { exportPublicKeyPem } from "./private_key_pem.ts";
import { subjectAltNamesOf } from "./subject_alt_names.ts";
import { certificateText, opensslOk, verifyChain, withTempDir } from "../testing/openssl.ts";
import { needs, OPENSSL } from "../testing/system_tools.ts";

const HOUR_MS = 3_600_000;
const ca = await createSelfSignedCa({ org: "cluster.local", ttlMs: 24 * HOUR_MS });
const workload = "spiffe://cluster.local/ns/default/sa/reviews";

Deno.test(
  "issueCertificate issues a leaf for DNS names, IPs and SPIFFE URIs that openssl verifies",
  needs(OPENSSL),
  async (t) => {
    const keys = await generateKeyPair({ algorithm: "ECDSA" });
    const leaf = await issueCertificate(ca, {
      dnsNames: ["reviews.default.svc", "*.reviews.default.svc"],
      ipAddresses: ["127.0.0.1", "::1"],
      uris: [workload],
      publicKey: keys.publicKey,
      ttlMs: HOUR_MS,
    });
    const pem = certificatesToPem([leaf]);
    const text = await certificateText(pem);

    await t.step("every SAN is present, critical because the subject is empty", () => {
      assert.match(text, /Subject: \n/);
      assert.match(
        text,
        /X509v3 Subject Alternative Name: critical\n\s+DNS:reviews.default.svc, DNS:\*.reviews.default.svc, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, URI:spiffe:\/\/cluster.local\/ns\/default\/sa\/reviews\n/,
      );
      assert.deepEqual(subjectAltNamesOf(leaf), {
        dnsNames: ["reviews.default.svc", "*.reviews.default.svc"],
        ipAddresses: ["127.0.0.1", "::1"],
        uris: [workload],
      });
    });
    await t.step("it is no CA, signs only, and serves both TLS server and client", () => {
      assert.match(text, /X509v3 Basic Constraints: critical\n\s+CA:FALSE/);
      assert.match(text, /X509v3 Key Usage: critical\n\s+Digital Signature\n/);
      assert.match(text, /TLS Web Server Authentication, TLS Web Client Authentication/);
      assert.match(text, /Issuer: O = cluster.local\n/);
      assert.match(text, /X509v3 Authority Key Identifier/);
    });
    await t.step("openssl verifies the chain to the CA, for server and client purposes", async () => {
      await withTempDir(async (dir) => {
        for (const purpose of ["sslserver", "sslclient"]) {
          const result = await verifyChain(dir, ca.certificatePem, pem, ["-purpose", purpose]);
          assert.equal(result.code, 0, result.stderr);
        }
        const host = await verifyChain(dir, ca.certificatePem, pem, [
          "-verify_hostname",
          "x.reviews.default.svc",
        ]);
        assert.equal(host.code, 0, host.stderr);
        const ip = await verifyChain(dir, ca.certificatePem, pem, ["-verify_ip", "::1"]);
        assert.equal(ip.code, 0, ip.stderr);
      });
    });
    await t.step("openssl rejects it against another CA, for another host, or after it expires", async () => {
      const other = await createSelfSignedCa({ org: "cluster.local", ttlMs: HOUR_MS, keyAlgorithm: "ECDSA" });
      await withTempDir(async (dir) => {
        assert.notEqual((await verifyChain(dir, other.certificatePem, pem)).code, 0);
        assert.notEqual(
          (await verifyChain(dir, ca.certificatePem, pem, ["-verify_hostname", "ratings"])).code,
          0,
        );
        const later = String(Math.floor(Date.now() / 1000) + 2 * HOUR_MS / 1000);
        const expired = await verifyChain(dir, ca.certificatePem, pem, ["-attime", later]);
        assert.match(expired.stdout + expired.stderr, /certificate has expired/);
      });
    });
  },
);

Deno.test("issueCertificate certifies the key of a certificate request", needs(OPENSSL), async (t) => {
  await t.step("a request we make: the names come from the options, never from the request", async () => {
    const keys = await generateKeyPair({ algorithm: "ECDSA" });
    const csr = await createCertificateRequest(keys, { uris: ["spiffe://cluster.local/ns/admin/sa/root"] });
    await opensslOk(["req", "-noout", "-verify"], csr); // throws unless openssl accepts the self-signature
    const leaf = await issueCertificate(ca, { csr, uris: [workload], ttlMs: HOUR_MS });
    assert.deepEqual(subjectAltNamesOf(leaf).uris, [workload]);
    assert.equal(
      await exportPublicKeyPem(await leaf.publicKey.export()),
      await exportPublicKeyPem(keys.publicKey),
    );
    await withTempDir(async (dir) => {
      const result = await verifyChain(dir, ca.certificatePem, certificatesToPem([leaf]));
      assert.equal(result.code, 0, result.stderr);
    });
  });
  await t.step("a request openssl makes, with an RSA key that also gets keyEncipherment", async () => {
    const csr = await opensslOk([
      "req",
      "-new",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "/dev/null",
      "-subj",
      "/CN=ignored",
    ]); // deno-fmt-ignore
    const parsed = await parseCertificateRequestPem(csr, "openssl.csr");
    const leaf = await issueCertificate(ca, {
      csr: parsed,
      dnsNames: ["ratings.default.svc"],
      ttlMs: HOUR_MS,
    });
    const pem = certificatesToPem([leaf]);
    assert.match(await certificateText(pem), /Digital Signature, Key Encipherment/);
    await withTempDir(async (dir) => {
      const result = await verifyChain(dir, ca.certificatePem, pem);
      assert.equal(result.code, 0, result.stderr);
    });
  });
  await t.step("a request whose signature was altered is rejected", async () => {
    const keys = await generateKeyPair({ algorithm: "ECDSA" });
    const csr = await createCertificateRequest(keys, { commonName: "x" });
    const request = new x509.Pkcs10CertificateRequest(csr);
    const der = new Uint8Array(request.rawData);
    der[der.length - 5] ^= 0xff; // inside the signature value
    await assert.rejects(
      issueCertificate(ca, { csr: new x509.Pkcs10CertificateRequest(der), dnsNames: ["x"], ttlMs: HOUR_MS }),
      { name: "SyntaxError" },
    );
  });
});

Deno.test("issueCertificate shapes validity and usages", needs(OPENSSL), async (t) => {
  const keys = await generateKeyPair({ algorithm: "ECDSA" });
  const base = { dnsNames: ["a.default.svc"], publicKey: keys.publicKey };

  await t.step("the lifetime is the TTL from the issuing time", async () => {
    const now = new Date(Date.now() + 60_000);
    const leaf = await issueCertificate(ca, { ...base, ttlMs: HOUR_MS, now });
    assert.equal(leaf.notAfter.getTime(), Math.floor((now.getTime() + HOUR_MS) / 1000) * 1000);
  });
  await t.step("a leaf never outlives its CA", async () => {
    const leaf = await issueCertificate(ca, { ...base, ttlMs: 365 * 24 * HOUR_MS });
    assert.equal(leaf.notAfter.getTime(), ca.certificate.notAfter.getTime());
  });
  await t.step("an expired CA cannot issue", async () => {
    await assert.rejects(
      issueCertificate(ca, { ...base, ttlMs: HOUR_MS, now: new Date(Date.now() + 48 * HOUR_MS) }),
      {
        name: "RangeError",
        message: /the CA expired at/,
      },
    );
  });
  await t.step("server-only usage and a subject make the SAN non-critical", async () => {
    const leaf = await issueCertificate(ca, { ...base, ttlMs: HOUR_MS, usages: ["server"], commonName: "a" });
    const text = await certificateText(certificatesToPem([leaf]));
    assert.match(text, /TLS Web Server Authentication\n/);
    assert.doesNotMatch(text, /Client Authentication/);
    assert.match(text, /Subject: CN = a\n/);
    assert.match(text, /X509v3 Subject Alternative Name: \n/);
  });
});

Deno.test("issueCertificate rejects bad requests with clear errors", async (t) => {
  const keys = await generateKeyPair({ algorithm: "ECDSA" });
  const cases: [string, Parameters<typeof issueCertificate>[1], string, RegExp][] = [
    ["no name", { publicKey: keys.publicKey, ttlMs: HOUR_MS }, "RangeError", /without a name/],
    [
      "an invalid DNS name",
      { dnsNames: ["bad_name!"], publicKey: keys.publicKey, ttlMs: HOUR_MS },
      "RangeError",
      /Invalid DNS name "bad_name!"/,
    ],
    [
      "an invalid IP",
      { ipAddresses: ["300.1.1.1"], publicKey: keys.publicKey, ttlMs: HOUR_MS },
      "RangeError",
      /Invalid IP address "300.1.1.1"/,
    ],
    [
      "a relative URI",
      { uris: ["ns/default"], publicKey: keys.publicKey, ttlMs: HOUR_MS },
      "RangeError",
      /Invalid URI "ns\/default"/,
    ],
    [
      "a negative TTL",
      { dnsNames: ["a"], publicKey: keys.publicKey, ttlMs: -1 },
      "RangeError",
      /Invalid TTL/,
    ],
    [
      "neither key nor request",
      { dnsNames: ["a"], ttlMs: HOUR_MS },
      "TypeError",
      /exactly one of publicKey and csr/,
    ],
    [
      "a private key to certify",
      { dnsNames: ["a"], publicKey: keys.privateKey, ttlMs: HOUR_MS },
      "TypeError",
      /got a private key/,
    ],
    [
      "a public key PEM that is not one",
      { dnsNames: ["a"], publicKey: "nope", ttlMs: HOUR_MS },
      "TypeError",
      /Invalid public key PEM/,
    ],
  ]; // deno-fmt-ignore
  for (const [name, options, errorName, message] of cases) {
    await t.step(name, async () => {
      await assert.rejects(issueCertificate(ca, options), { name: errorName, message });
    });
  }
  await t.step("a public key given as PEM works", async () => {
    const leaf = await issueCertificate(ca, {
      dnsNames: ["a"],
      publicKey: await exportPublicKeyPem(keys.publicKey),
      ttlMs: HOUR_MS,
    });
    assert.deepEqual(subjectAltNamesOf(leaf).dnsNames, ["a"]);
  });
});
