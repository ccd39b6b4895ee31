import assert from "node:assert/strict";
import { silentLogger } from "@mesh/shared/log/logger";
import { makePluggedInCa, writePluggedInCa } from "@mesh/shared/testing/plugged_in_ca";
import { withTempDir } from "@mesh/shared/testing/openssl";
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
    const plugged = await makePluggedInCa(100 * DAY);
    const { files } = plugged;
    for (const name of ["ca-cert.pem", "ca-key.pem", "root-cert.pem"] as const) {
      await Deno.writeTextFile(`${dir}/${name}`, files[name]);
    }
    await assert.rejects(() => CaKeyStore.open(options(dir, () => new Date())), /cert-chain\.pem/);
    await writePluggedInCa(plugged, dir);
    const store = await CaKeyStore.open(options(dir, () => new Date()));
    assert.equal(store.current.plugged, true);
    assert.equal(store.current.signer.certificatePem, files["ca-cert.pem"]);
    assert.deepEqual(store.current.chainPem, [files["ca-cert.pem"], files["root-cert.pem"]]);
    assert.deepEqual(store.current.rootsPem, [files["root-cert.pem"]]);
    assert.equal(await store.check(), false, "a plugged-in CA is never rotated here");
  });
});

Deno.test("A plugged-in CA handed over from a Secret signs like one in ROOT_CA_DIR; both at once, or partial keys, are refused", async () => {
  await withTempDir(async (dir) => {
    const plugged = await makePluggedInCa(100 * DAY);
    const source = 'Secret "mesh-system/cacerts"';
    const store = await CaKeyStore.open({
      ...options(dir, () => new Date()),
      plugged: { source, files: plugged.files },
    });
    assert.equal(store.current.plugged, true);
    assert.equal(store.current.signer.certificatePem, plugged.files["ca-cert.pem"]);
    assert.deepEqual(store.current.rootsPem, [plugged.files["root-cert.pem"]]);

    const { ["cert-chain.pem"]: _, ...partial } = plugged.files;
    await assert.rejects(
      () => CaKeyStore.open({ ...options(dir, () => new Date()), plugged: { source, files: partial } }),
      /Secret "mesh-system\/cacerts" holds ca-cert\.pem, ca-key\.pem, root-cert\.pem but not cert-chain\.pem/,
    );
    await Deno.writeTextFile(`${dir}/ca-key.pem`, plugged.files["ca-key.pem"]);
    await assert.rejects(
      () => CaKeyStore.open({ ...options(dir, () => new Date()), plugged: { source, files: plugged.files } }),
      /holds ca-key\.pem while the plugged-in CA comes from Secret "mesh-system\/cacerts": expected one/,
    );
  });
});
