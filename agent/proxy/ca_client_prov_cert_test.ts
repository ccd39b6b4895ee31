import "reflect-metadata";
import assert from "node:assert/strict";
import { join } from "node:path";
import { ISTIO_CA_SERVICE } from "@mesh/proto/ca_service";
import { createCertificateRequest, generateKeyPair } from "@mesh/shared/pki";
import { CaClient } from "./ca_client.ts";
import { startTestCa } from "./_test_ca.ts";

async function csr(): Promise<string> {
  return await createCertificateRequest(await generateKeyPair({ algorithm: "ECDSA" }), {});
}

Deno.test("CaClient with PROV_CERT presents the provisioned certificate, read again for every request", async () => {
  const ca = await startTestCa();
  const dir = await Deno.makeTempDir({ prefix: "prov_cert_" });
  const write = async (pair: { keyPem: string; certChainPem: string }) => {
    await Deno.writeTextFile(join(dir, "key.pem"), pair.keyPem);
    await Deno.writeTextFile(join(dir, "cert-chain.pem"), pair.certChainPem);
  };
  const client = new CaClient({
    address: ca.address,
    rootPem: ca.rootPem,
    serverName: "meshd.mesh-system.svc",
    token: () => Promise.resolve("the-token"),
    provisionedDir: dir,
  });
  try {
    // No provisioned files yet: the token authenticates, as the reference falls back.
    await client.sign(await csr(), 600);
    assert.equal(ca.calls[0].authorization, "Bearer the-token");
    assert.equal(ca.calls[0].clientCert, undefined);

    const first = await ca.issue("spiffe://cluster.local/ns/vm/sa/first");
    await write(first);
    await client.sign(await csr(), 600);
    assert.equal(ca.calls[1].clientCert, first.der, "the provisioned certificate is presented");
    assert.equal(ca.calls[1].authorization, undefined, "without USE_TOKEN_FOR_CSR the certificate is enough");

    const rotated = await ca.issue("spiffe://cluster.local/ns/vm/sa/rotated");
    await write(rotated);
    await client.sign(await csr(), 600);
    assert.equal(
      ca.calls[2].clientCert,
      rotated.der,
      "a rotated provisioned certificate is the next presented",
    );
  } finally {
    client.close();
    await ca.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("CaClient with USE_TOKEN_FOR_CSR sends the token beside the provisioned certificate", async () => {
  const ca = await startTestCa();
  const dir = await Deno.makeTempDir({ prefix: "prov_cert_" });
  const pair = await ca.issue("spiffe://cluster.local/ns/vm/sa/app");
  await Deno.writeTextFile(join(dir, "key.pem"), pair.keyPem);
  await Deno.writeTextFile(join(dir, "cert-chain.pem"), pair.certChainPem);
  const client = new CaClient({
    address: ca.address,
    rootPem: ca.rootPem,
    serverName: "meshd.mesh-system.svc",
    token: () => Promise.resolve("the-token"),
    provisionedDir: dir,
    tokenWithCert: true,
  });
  try {
    await client.sign(await csr(), 600);
    assert.equal(ca.calls[0].clientCert, pair.der);
    assert.equal(ca.calls[0].authorization, "Bearer the-token");
  } finally {
    client.close();
    await ca.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("CaClient asks the service CA_PROVIDER names", async () => {
  const ca = await startTestCa(ISTIO_CA_SERVICE);
  const client = new CaClient({
    address: ca.address,
    rootPem: ca.rootPem,
    serverName: "meshd.mesh-system.svc",
    token: () => Promise.resolve(undefined),
    service: ISTIO_CA_SERVICE,
  });
  try {
    const chain = await client.sign(await csr(), 600);
    assert.equal(chain.length, 2);
  } finally {
    client.close();
    await ca.close();
  }
});
