import assert from "node:assert/strict";
import { silentLogger } from "../../shared/log/logger.ts";
import { Metrics } from "../../shared/metrics/metrics.ts";
import {
  createCertificateRequest,
  createSelfSignedCa,
  generateKeyPair,
  issueCertificate,
} from "../../shared/pki/mod.ts";
import { CaKeyStore } from "./ca_keys.ts";
import { ClientCertAuthenticator } from "./caller_authenticator.ts";
import { handleCreateCertificate } from "./ca_service.ts";

Deno.test("The CA service counts each outcome in the ca_server metrics", async () => {
  const metrics = new Metrics("discovery", { version: "test", tag: "test" });
  const keys = await CaKeyStore.open({
    rootCaDir: `/tmp/mesh-no-such-ca-dir-${crypto.randomUUID()}`,
    trustDomain: "cluster.local",
    selfSignedTtlMs: 24 * 3_600_000,
    rsaKeySize: 2048,
    gracePercent: 20,
    now: () => new Date(),
    log: silentLogger,
  });
  const deps = {
    keys,
    policy: { defaultTtlMs: 3_600_000, maxTtlMs: 7_200_000 },
    authenticators: [new ClientCertAuthenticator()],
    now: () => new Date(),
    log: silentLogger,
    metrics,
  };
  const other = await createSelfSignedCa({ org: "x", ttlMs: 3_600_000 });
  const pair = await generateKeyPair({ algorithm: "ECDSA" });
  const cert = (uris: string[]) =>
    issueCertificate(other, {
      publicKey: pair.publicKey,
      ttlMs: 3_600_000,
      ...(uris.length ? { uris } : { dnsNames: ["a.example"] }),
    });
  const csr = await createCertificateRequest(pair, {});
  const der = async (uris: string[]) => new Uint8Array((await cert(uris)).rawData);

  await handleCreateCertificate(deps, { csr, validityDuration: 60 }, {
    peerCertificateDer: await der(["spiffe://cluster.local/ns/a/sa/b"]),
    authorization: [],
  });
  await assert.rejects(() =>
    handleCreateCertificate(deps, { csr, validityDuration: 60 }, {
      peerCertificateDer: der([]) as never,
      authorization: [],
    })
  );
  await assert.rejects(async () =>
    handleCreateCertificate(deps, { csr, validityDuration: 60 }, {
      peerCertificateDer: await der([]),
      authorization: [],
    })
  );
  await assert.rejects(() =>
    handleCreateCertificate(deps, { csr: "junk", validityDuration: 60 }, { authorization: [] })
  );
  await assert.rejects(async () =>
    handleCreateCertificate(deps, { csr: "junk", validityDuration: 60 }, {
      peerCertificateDer: await der(["spiffe://cluster.local/ns/a/sa/b"]),
      authorization: [],
    })
  );
  const value = async (name: string) =>
    (await metrics.counter(name).get()).values.reduce((n, v) => n + v.value, 0);
  assert.equal(await value("ca_server_csr_count"), 5);
  assert.equal(await value("ca_server_success_cert_issuance_count"), 1);
  assert.equal(await value("ca_server_authentication_failure_count"), 3);
  assert.equal(await value("ca_server_id_extraction_err_count"), 1);
  assert.equal(await value("ca_server_csr_parsing_err_count"), 1);
});
