import "reflect-metadata";
import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { silentLogger } from "@mesh/shared/log/logger";
import {
  certificatesToPem,
  createSelfSignedCa,
  exportPrivateKeyPem,
  generateKeyPair,
  issueCertificate,
} from "@mesh/shared/pki";
import { mirrorSecretFiles, MountedSecrets, writeSecretFiles } from "./secret_files.ts";
import { type WorkloadSecret, WorkloadSecrets } from "./workload_secrets.ts";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { symlink } from "@mesh/shared/testing/symlink";
import { opensslOk, verifyChain } from "@mesh/shared/testing/openssl";
import { needs, OPENSSL } from "@mesh/shared/testing/system_tools";
import { recordingSigner } from "./_test_ca.ts";

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
  const log = new RecordingLogger();
  const mounted = new MountedSecrets({ dir, checkIntervalMs: 50, log });
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
    await waitFor(
      () => log.matching("warn", "mounted certificates are not usable").length === 1,
      "the broken set read and refused",
    );
    assert.equal(mounted.current?.certChainPem, second.certChainPem, "a broken set keeps the last good one");
    assert.equal(seen.length, 2);
  } finally {
    mounted.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MountedSecrets refuses a key that is not the chain's and keeps the last good set", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mounted_certs_" });
  const mounted = new MountedSecrets({ dir, checkIntervalMs: 60_000, log: silentLogger });
  try {
    const first = await workloadSecret();
    await writeSecretFiles(dir, first);
    await mounted.load();
    const other = await workloadSecret();
    await Deno.writeTextFile(`${dir}/key.pem`, other.privateKeyPem);
    await assert.rejects(() => mounted.load(), /key\.pem is not the one .*cert-chain\.pem certifies/);
    assert.equal(mounted.current?.privateKeyPem, first.privateKeyPem);
  } finally {
    mounted.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MountedSecrets rereads its files on its injected clock, and stops with close", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mounted_certs_" });
  const clock = FakeTimers.createClock(0);
  const hour = 3_600_000;
  const mounted = new MountedSecrets({
    dir,
    checkIntervalMs: hour,
    debounceMs: hour,
    log: silentLogger,
    timers: timersOf(clock),
  });
  try {
    const first = await workloadSecret();
    await writeSecretFiles(dir, first);
    mounted.start();
    await waitFor(() => mounted.current?.privateKeyPem === first.privateKeyPem, "the first read");
    const second = await workloadSecret();
    await writeSecretFiles(dir, second);
    await waitFor(() => clock.countTimers() === 1, "the next check");
    clock.tick(hour);
    await waitFor(() => mounted.current?.privateKeyPem === second.privateKeyPem, "the check's reread");
  } finally {
    mounted.close();
    await Deno.remove(dir, { recursive: true });
  }
  assert.equal(clock.countTimers(), 0, "no check after close");
});

/** Writes `secret` as an orchestrator volume does: a timestamped folder, `..data` pointing at it, files via it. */
async function writeVolumeVersion(dir: string, version: string, secret: WorkloadSecret): Promise<void> {
  await writeSecretFiles(`${dir}/${version}`, secret);
  await symlink(version, `${dir}/..data_tmp`);
  // The swap itself: one rename of the link over `..data`, as the orchestrator's atomic writer does.
  await Deno.rename(`${dir}/..data_tmp`, `${dir}/..data`);
}

Deno.test("FILE_MOUNTED_CERTS follows a volume's ..data swap without waiting for the check interval", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mounted_volume_" });
  // An hour: only the folder watch can bring the swap in while the test waits.
  const mounted = new MountedSecrets({ dir, checkIntervalMs: 3_600_000, log: silentLogger });
  try {
    const first = await workloadSecret();
    await writeVolumeVersion(dir, "..2026_11_27_01", first);
    for (const name of ["key.pem", "cert-chain.pem", "root-cert.pem"]) {
      await symlink(`..data/${name}`, `${dir}/${name}`);
    }
    await mounted.load();
    mounted.start();
    const second = await workloadSecret();
    await writeVolumeVersion(dir, "..2026_11_27_02", second);
    await waitFor(() => mounted.current?.certChainPem === second.certChainPem, "the swapped set", 10_000, 20);
    assert.equal(mounted.current?.privateKeyPem, second.privateKeyPem);
  } finally {
    mounted.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "OUTPUT_CERTS holds a key, chain and root that openssl verifies, after a rotation too",
  ...needs(OPENSSL),
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "output_certs_" });
  const signer = await recordingSigner();
  const secrets = new WorkloadSecrets({
    signer,
    ttlSeconds: 600,
    graceRatio: 0.5,
    checkIntervalMs: 60_000,
    ecdsa: true,
    log: silentLogger,
  });
  const out = `${dir}/out`;
  const check = async (secret: WorkloadSecret) => {
    assert.equal(await Deno.readTextFile(`${out}/cert-chain.pem`), secret.certChainPem);
    const verified = await verifyChain(
      dir,
      await Deno.readTextFile(`${out}/root-cert.pem`),
      secret.certChainPem,
    );
    assert.equal(verified.code, 0, verified.stderr);
    const certKey = await opensslOk(["x509", "-noout", "-pubkey", "-in", `${out}/cert-chain.pem`]);
    const ownKey = await opensslOk(["pkey", "-pubout", "-in", `${out}/key.pem`]);
    assert.equal(ownKey, certKey, "key.pem is the key cert-chain.pem certifies");
  };
  try {
    const first = await secrets.renew();
    const unsubscribe = await mirrorSecretFiles(out, secrets, silentLogger);
    await check(first);
    const rotated = await secrets.renew();
    await waitFor(
      async () => await Deno.readTextFile(`${out}/cert-chain.pem`) === rotated.certChainPem,
      "the rotated chain in OUTPUT_CERTS",
    );
    await check(rotated);
    unsubscribe();
  } finally {
    secrets.close();
    await Deno.remove(dir, { recursive: true });
  }
});
