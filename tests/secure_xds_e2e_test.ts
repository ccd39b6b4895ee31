/**
 * ADS on the secure port (15012) end to end: TLS with the CA's serving certificate; with `XDS_AUTH` a caller
 * must prove an identity, and with the identity check it may speak only for proxies of its own namespace.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { TYPE_URL } from "../proto/type_urls.ts";
import {
  certificatesToPem,
  exportPrivateKeyPem,
  generateKeyPair,
  issueCertificate,
} from "../shared/pki/mod.ts";
import { makePluggedInCa, writePluggedInCa } from "../shared/testing/plugged_in_ca.ts";
import { TestAdsClient, testNode } from "../discovery/xds/_test_ads_client.ts";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";

const DAY = 24 * 3_600_000;

async function outcome(client: TestAdsClient, namespace: string): Promise<string> {
  const node = testNode(`sidecar~10.9.9.9~app.${namespace}~${namespace}.svc.cluster.local`, {
    NAMESPACE: namespace,
  });
  client.send({ node, type_url: TYPE_URL.cluster, resource_names: [] });
  const result = await Promise.race([
    client.next(20_000).then(() => "served"),
    client.ended().then((s) => `ended ${s.code}: ${s.details}`),
  ]);
  client.close();
  return result;
}

Deno.test("The secure port serves ADS to callers who prove an identity, for proxies of their namespace only", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "mesh_secure_xds_" });
  const plugged = await makePluggedInCa(30 * DAY);
  await writePluggedInCa(plugged, dir);
  const root = Buffer.from(plugged.files["root-cert.pem"]);
  const keys = await generateKeyPair({ algorithm: "ECDSA" });
  const cert = await issueCertificate(plugged.intermediate, {
    publicKey: keys.publicKey,
    uris: ["spiffe://cluster.local/ns/example/sa/app"],
    ttlMs: DAY,
  });
  const withCert = grpc.credentials.createSsl(
    root,
    Buffer.from(await exportPrivateKeyPem(keys.privateKey)),
    Buffer.from(certificatesToPem([cert]) + plugged.files["ca-cert.pem"]),
  );
  const start = async (xdsAuth: boolean) => {
    const addresses = discoveryAddresses();
    const server = startProgram(
      "mesh-discovery",
      discoveryArgs(addresses, ["--registries", "Mock", "--configDir", "examples/config", "--log_as_json"]),
      { ROOT_CA_DIR: dir, XDS_AUTH: String(xdsAuth) },
    );
    await server.waitFor(/"msg":"discovery server started"/);
    return { server, port: Number(addresses.secureGRPCAddr.split(":").at(-1)) };
  };
  try {
    const { server, port } = await start(true);
    try {
      await t.step("with a client certificate, for its own namespace: served", async () => {
        assert.equal(await outcome(TestAdsClient.sotwTls(port, withCert, "localhost"), "example"), "served");
      });
      await t.step("with a client certificate, for another namespace: PERMISSION_DENIED", async () => {
        const result = await outcome(TestAdsClient.sotwTls(port, withCert, "localhost"), "other");
        assert.match(result, /^ended 7: .*namespace "other"/);
      });
      await t.step("without a certificate or token: UNAUTHENTICATED", async () => {
        const result = await outcome(
          TestAdsClient.sotwTls(port, grpc.credentials.createSsl(root), "localhost"),
          "example",
        );
        assert.match(result, /^ended 16: XDS_AUTH/);
      });
    } finally {
      await server.stop();
    }
    await t.step("with XDS_AUTH=false, a caller without a certificate is served", async () => {
      const open = await start(false);
      try {
        const result = await outcome(
          TestAdsClient.sotwTls(open.port, grpc.credentials.createSsl(root), "localhost"),
          "x",
        );
        assert.equal(result, "served");
      } finally {
        await open.server.stop();
      }
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
