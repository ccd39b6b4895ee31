import "reflect-metadata";
import assert from "node:assert/strict";
import { silentLogger } from "../../shared/log/logger.ts";
import {
  certificatesToPem,
  createSelfSignedCa,
  exportPrivateKeyPem,
  generateKeyPair,
  issueCertificate,
} from "../../shared/pki/mod.ts";
import { MountedSecrets, writeSecretFiles } from "./secret_files.ts";
import type { WorkloadSecret } from "./workload_secrets.ts";
import { waitFor } from "../../shared/testing/wait_for.ts";

async function workloadSecret(): Promise<WorkloadSecret> {
  const ca = await createSelfSignedCa({ org: "cluster.local", ttlMs: 3_600_000, keyAlgorithm: "ECDSA" });
  const keys = await generateKeyPair({ algorithm: "ECDSA" });
  const leaf = await issueCertificate(ca, {
    publicKey: keys.publicKey,
    uris: ["spiffe://cluster.local/ns/example/sa/app"],
    ttlMs: 600_000,
  });
  return {
    certChainPem: certificatesToPem([leaf]),
    privateKeyPem: await exportPrivateKeyPem(keys.privateKey),
    rootPem: ca.certificatePem,
    notBefore: leaf.notBefore,
    notAfter: leaf.notAfter,
  };
}

Deno.test("writeSecretFiles writes key, chain and roots, the key readable by its owner only", async () => {
  const dir = await Deno.makeTempDir({ prefix: "secret_files_" });
  try {
    const secret = await workloadSecret();
    await writeSecretFiles(`${dir}/out`, secret);
    assert.equal(await Deno.readTextFile(`${dir}/out/cert-chain.pem`), secret.certChainPem);
    assert.equal(await Deno.readTextFile(`${dir}/out/root-cert.pem`), secret.rootPem);
    assert.equal(await Deno.readTextFile(`${dir}/out/key.pem`), secret.privateKeyPem);
    assert.equal((await Deno.stat(`${dir}/out/key.pem`)).mode! & 0o777, 0o600);
    const next = await workloadSecret();
    await writeSecretFiles(`${dir}/out`, next);
    assert.equal(
      await Deno.readTextFile(`${dir}/out/cert-chain.pem`),
      next.certChainPem,
      "rotation rewrites",
    );
    assert.deepEqual([...Deno.readDirSync(`${dir}/out`)].map((e) => e.name).sort(), [
      "cert-chain.pem",
      "key.pem",
      "root-cert.pem",
    ], "no temporary file is left behind");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MountedSecrets serves mounted files, follows their replacement and keeps the last good set", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mounted_certs_" });
  const mounted = new MountedSecrets({ dir, checkIntervalMs: 50, log: silentLogger });
  try {
    await assert.rejects(() => mounted.load(), /FILE_MOUNTED_CERTS: cannot read .*key\.pem/);
    const first = await workloadSecret();
    await writeSecretFiles(dir, first);
    const seen: WorkloadSecret[] = [];
    mounted.onChange((s) => seen.push(s));
    assert.equal((await mounted.load())?.certChainPem, first.certChainPem);
    assert.equal(mounted.current?.notAfter.getTime(), first.notAfter.getTime());
    mounted.start();

    const second = await workloadSecret();
    await writeSecretFiles(dir, second);
    await waitFor(() => mounted.current?.certChainPem === second.certChainPem, "a replaced set", 5_000, 20);
    assert.equal(seen.length, 2);

    await Deno.writeTextFile(`${dir}/cert-chain.pem`, "not a certificate\n");
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(mounted.current?.certChainPem, second.certChainPem, "a broken set keeps the last good one");
    assert.equal(seen.length, 2);
  } finally {
    mounted.close();
    await Deno.remove(dir, { recursive: true });
  }
});
