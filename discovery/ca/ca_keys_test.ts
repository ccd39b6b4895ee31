import assert from "node:assert/strict";
import { silentLogger } from "../../shared/log/logger.ts";
import {
  certificatesToPem,
  createSelfSignedCa,
  exportPrivateKeyPem,
  generateKeyPair,
} from "../../shared/pki/mod.ts";
import { x509 } from "../../shared/pki/_x509.ts";
import { withTempDir } from "../../shared/testing/openssl.ts";
import { type CaKeyOptions, CaKeyStore } from "./ca_keys.ts";

const DAY = 24 * 3_600_000;

function options(rootCaDir: string, now: () => Date): CaKeyOptions {
  return {
    rootCaDir,
    trustDomain: "cluster.local",
    selfSignedTtlMs: 100 * DAY,
    rsaKeySize: 2048,
    gracePercent: 20,
    now,
    log: silentLogger,
  };
}

Deno.test("A self-signed root rotates when less than the grace percentage of its life is left; both stay trusted", async () => {
  let now = new Date("2026-01-01T00:00:00Z");
  const store = await CaKeyStore.open(options(`/tmp/mesh-no-such-ca-dir-${crypto.randomUUID()}`, () => now));
  const first = store.current.rootsPem[0];
  now = new Date(now.getTime() + 79 * DAY);
  assert.equal(await store.check(), false, "21% of its life left: no rotation");
  now = new Date(now.getTime() + 2 * DAY);
  assert.equal(await store.check(), true, "19% left: rotated");
  assert.notEqual(store.current.rootsPem[0], first);
  assert.deepEqual(store.current.rootsPem.slice(1), [first], "the old root is still trusted");
  now = new Date(now.getTime() + 20 * DAY);
  await store.check();
  assert.equal(store.current.rootsPem.length, 1, "the old root is dropped once it expired");
});

Deno.test("A plugged-in CA in ROOT_CA_DIR signs with its intermediate and serves its chain; partial files are refused", async () => {
  await withTempDir(async (dir) => {
    const root = await createSelfSignedCa({ org: "example root", ttlMs: 365 * DAY });
    const keys = await generateKeyPair({ algorithm: "RSA" });
    // issueCertificate makes leaves; an intermediate needs CA constraints, so build it with x509 directly.
    const ca = await x509.X509CertificateGenerator.create({
      serialNumber: "0a",
      subject: "CN=mesh intermediate",
      issuer: root.certificate.subject,
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 100 * DAY),
      signingKey: root.keys.privateKey,
      publicKey: keys.publicKey,
      signingAlgorithm: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
      extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
    });
    const caPem = certificatesToPem([ca]);
    await Deno.writeTextFile(`${dir}/ca-cert.pem`, caPem);
    await Deno.writeTextFile(`${dir}/ca-key.pem`, await exportPrivateKeyPem(keys.privateKey));
    await Deno.writeTextFile(`${dir}/root-cert.pem`, root.certificatePem);
    const partial = CaKeyStore.open(options(dir, () => new Date()));
    await assert.rejects(() => partial, /cert-chain\.pem/);
    await Deno.writeTextFile(`${dir}/cert-chain.pem`, caPem + root.certificatePem);
    const store = await CaKeyStore.open(options(dir, () => new Date()));
    assert.equal(store.current.plugged, true);
    assert.equal(store.current.signer.certificatePem, caPem);
    assert.deepEqual(store.current.chainPem, [caPem, root.certificatePem]);
    assert.deepEqual(store.current.rootsPem, [root.certificatePem]);
    assert.equal(await store.check(), false, "a plugged-in CA is never rotated here");
  });
});
