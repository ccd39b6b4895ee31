import assert from "node:assert/strict";
import { silentLogger } from "@mesh/shared/log/logger";
import {
  createCertificateRequest,
  generateKeyPair,
  parseCertificatesPem,
  subjectAltNamesOf,
} from "@mesh/shared/pki";
import { certificateText, opensslOk, verifyChain, withTempDir } from "@mesh/shared/testing/openssl";
import { needs, OPENSSL } from "@mesh/shared/testing/system_tools";
import { CaKeyStore } from "./ca_keys.ts";
import { CaRequestError, signCsr } from "./ca_signer.ts";

const HOUR = 3_600_000;
const NOW = new Date("2026-01-01T00:00:00Z");
const CALLER = "spiffe://cluster.local/ns/shop/sa/ratings";
const POLICY = { defaultTtlMs: 24 * HOUR, maxTtlMs: 90 * 24 * HOUR };

const store = await CaKeyStore.open({
  // A directory that does not exist: no plugged-in CA, so a self-signed root.
  rootCaDir: `/tmp/mesh-no-such-ca-dir-${crypto.randomUUID()}`,
  trustDomain: "cluster.local",
  selfSignedTtlMs: 365 * 24 * HOUR,
  rsaKeySize: 2048,
  gracePercent: 20,
  now: () => NOW,
  log: silentLogger,
});

async function ourCsr(uris: string[] = []): Promise<string> {
  return await createCertificateRequest(await generateKeyPair({ algorithm: "ECDSA" }), { uris });
}

Deno.test(
  "The CA signs our CSRs and openssl's; openssl verifies each chain; the SAN is the caller's",
  needs(OPENSSL),
  async (t) => {
    await withTempDir(async (dir) => {
      await opensslOk([
        "req",
        "-new",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        `${dir}/k.pem`,
        "-out",
        `${dir}/r.pem`,
        "-subj",
        "/O=evil",
        "-addext",
        "subjectAltName=URI:spiffe://cluster.local/ns/kube-system/sa/admin",
      ]);
      const requests = {
        "our CSR": await ourCsr(),
        "openssl's CSR asking for someone else's identity": await Deno.readTextFile(`${dir}/r.pem`),
      };
      for (const [what, csrPem] of Object.entries(requests)) {
        await t.step(what, async () => {
          const chain = await signCsr(
            { csrPem, validitySeconds: 0, identities: [CALLER] },
            store.current,
            POLICY,
            NOW,
          );
          assert.equal(chain.length, 2, "leaf then root");
          assert.equal(chain.at(-1), store.current.rootsPem[0]);
          const verified = await verifyChain(dir, chain.at(-1)!, chain[0], [
            "-attime",
            String(NOW.getTime() / 1000 + 60),
          ]);
          assert.equal(verified.code, 0, verified.stderr);
          const text = await certificateText(chain[0]);
          assert.match(text, /URI:spiffe:\/\/cluster\.local\/ns\/shop\/sa\/ratings/);
          assert.doesNotMatch(text, /kube-system/);
          const [leaf] = parseCertificatesPem(chain[0]);
          assert.deepEqual(subjectAltNamesOf(leaf).uris, [CALLER]);
          assert.equal(
            leaf.notAfter.getTime() - leaf.notBefore.getTime() <= 24 * HOUR + 120_000,
            true,
            "default TTL",
          );
        });
      }
    });
  },
);

Deno.test("The CA's TTL rules: the request's, the default for ≤ 0, refused above the maximum, cut at the CA's end", async () => {
  const csrPem = await ourCsr();
  const ttlOf = async (validitySeconds: number, at = NOW) => {
    const [leafPem] = await signCsr(
      { csrPem, validitySeconds, identities: [CALLER] },
      store.current,
      POLICY,
      at,
    );
    const [leaf] = parseCertificatesPem(leafPem);
    return leaf.notAfter.getTime() - at.getTime();
  };
  assert.ok(Math.abs(await ttlOf(3600) - HOUR) < 1000);
  assert.ok(Math.abs(await ttlOf(-5) - 24 * HOUR) < 1000);
  await assert.rejects(() => ttlOf(91 * 24 * 3600), (e) => e instanceof CaRequestError && e.reason === "ttl");
  const nearEnd = new Date(store.current.signer.certificate.notAfter.getTime() - HOUR);
  assert.ok(await ttlOf(24 * 3600, nearEnd) <= HOUR, "never beyond the CA's expiry");
});

Deno.test("A malformed CSR or one with a bad signature is refused with a message", async () => {
  const bad = async (csrPem: string) =>
    await assert.rejects(
      () => signCsr({ csrPem, validitySeconds: 0, identities: [CALLER] }, store.current, POLICY, NOW),
      (e) => e instanceof CaRequestError && e.reason === "csr_parsing" && e.message.length > 10,
    );
  await bad("not a csr");
  const good = await ourCsr();
  const body = good.split("\n").slice(1, -2).join("");
  const bytes = Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
  bytes[bytes.length - 5] ^= 0xff;
  const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${
    btoa(String.fromCharCode(...bytes))
  }\n-----END CERTIFICATE REQUEST-----\n`;
  await bad(tampered);
});
