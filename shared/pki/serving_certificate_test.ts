import assert from "node:assert/strict";
import { certifiesKey, parseCertificatePem } from "./certificate_pem.ts";
import { importPrivateKeyPem } from "./private_key_pem.ts";
import { selfSignedServingCert } from "./serving_certificate.ts";
import { subjectAltNamesOf } from "./subject_alt_names.ts";
import { certificateText, verifyChain, withTempDir } from "../testing/openssl.ts";
import { needs, OPENSSL } from "../testing/system_tools.ts";

Deno.test(
  "selfSignedServingCert makes a server certificate under a throwaway CA",
  needs(OPENSSL),
  async (t) => {
    const serving = await selfSignedServingCert(["meshd.mesh-system.svc", "localhost", "127.0.0.1"]);
    const leaf = parseCertificatePem(serving.certPem);

    await t.step("host names become DNS SANs and IP literals IP SANs", () => {
      assert.deepEqual(subjectAltNamesOf(leaf), {
        dnsNames: ["meshd.mesh-system.svc", "localhost"],
        ipAddresses: ["127.0.0.1"],
        uris: [],
      });
    });
    await t.step("the key is the certificate's", async () => {
      const keys = await importPrivateKeyPem(serving.keyPem);
      assert.ok(await certifiesKey(leaf, keys.publicKey));
    });
    await t.step("it is a server certificate issued by a CA that is not itself", async () => {
      const text = await certificateText(serving.certPem);
      assert.match(text, /TLS Web Server Authentication\n/);
      assert.match(await certificateText(serving.caPem), /CA:TRUE/);
      assert.notEqual(serving.caPem, serving.certPem);
      assert.equal(serving.notAfter.getTime(), leaf.notAfter.getTime());
    });
    await t.step("openssl verifies it against the CA for each of its names", async () => {
      await withTempDir(async (dir) => {
        for (
          const check of [
            ["-verify_hostname", "meshd.mesh-system.svc"],
            ["-verify_hostname", "localhost"],
            ["-verify_ip", "127.0.0.1"],
          ]
        ) {
          const result = await verifyChain(dir, serving.caPem, serving.certPem, [
            "-purpose",
            "sslserver",
            ...check,
          ]);
          assert.equal(result.code, 0, `${check.join(" ")}: ${result.stderr}`);
        }
        const wrong = await verifyChain(dir, serving.caPem, serving.certPem, [
          "-verify_hostname",
          "meshd.other.svc",
        ]);
        assert.notEqual(wrong.code, 0);
      });
    });
    await t.step("two calls make unrelated CAs", async () => {
      const other = await selfSignedServingCert(["localhost"]);
      await withTempDir(async (dir) => {
        assert.notEqual((await verifyChain(dir, other.caPem, serving.certPem)).code, 0);
      });
    });
    await t.step("it needs at least one name", async () => {
      await assert.rejects(selfSignedServingCert([]), { name: "RangeError" });
    });
  },
);
