/**
 * SPIFFE federation on the secure port end to end: `mesh-discovery` fetches a partner trust domain's bundle
 * from its HTTPS bundle endpoint (`SPIFFE_BUNDLE_ENDPOINTS`) and, with `XDS_AUTH`, serves ADS to a partner
 * workload whose certificate that bundle vouches for, while the partner's CA still cannot speak for the mesh's
 * own trust domain. `--caCertFile` is served among the roots that verify the discovery server.
 */
import "reflect-metadata";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { TYPE_URL } from "../proto/type_urls.ts";
import {
  type CertificateAuthority,
  certificatesToPem,
  createSelfSignedCa,
  exportPrivateKeyPem,
  generateKeyPair,
  issueCertificate,
} from "../shared/pki/mod.ts";
import { TestAdsClient, testNode } from "../discovery/xds/_test_ads_client.ts";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";

const HOUR = 3_600_000;

async function clientCredentials(ca: CertificateAuthority, uri: string, rootsPem: string) {
  const keys = await generateKeyPair({ algorithm: "ECDSA" });
  const cert = await issueCertificate(ca, { publicKey: keys.publicKey, uris: [uri], ttlMs: HOUR });
  return grpc.credentials.createSsl(
    Buffer.from(rootsPem),
    Buffer.from(await exportPrivateKeyPem(keys.privateKey)),
    Buffer.from(certificatesToPem([cert])),
  );
}

async function outcome(port: number, credentials: grpc.ChannelCredentials): Promise<string> {
  const client = TestAdsClient.sotwTls(port, credentials, "localhost");
  const node = testNode("sidecar~10.9.9.9~app.example~example.svc.cluster.local", { NAMESPACE: "example" });
  client.send({ node, type_url: TYPE_URL.cluster, resource_names: [] });
  const result = await Promise.race([
    client.next(20_000).then(() => "served"),
    client.ended().then((s) => `ended ${s.code}: ${s.details}`),
  ]);
  client.close();
  return result;
}

Deno.test("The secure port serves workloads of a federated trust domain that its bundle vouches for", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "mesh_federation_e2e_" });
  // The partner's bundle endpoint, over HTTPS with a certificate the discovery process is told to trust.
  const web = await createSelfSignedCa({ org: "bundle endpoint CA", ttlMs: HOUR, keyAlgorithm: "ECDSA" });
  const webKeys = await generateKeyPair({ algorithm: "ECDSA" });
  const webCert = await issueCertificate(web, {
    publicKey: webKeys.publicKey,
    ipAddresses: ["127.0.0.1"],
    usages: ["server"],
    ttlMs: HOUR,
  });
  await Deno.writeTextFile(join(dir, "web-ca.pem"), web.certificatePem);
  const partner = await createSelfSignedCa({ org: "partner.example", ttlMs: HOUR, keyAlgorithm: "ECDSA" });
  const x5c = Buffer.from(partner.certificate.rawData).toString("base64");
  let fetched = 0;
  const endpoint = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: certificatesToPem([webCert]),
    key: await exportPrivateKeyPem(webKeys.privateKey),
    onListen() {},
  }, () => {
    fetched++;
    return Response.json({ keys: [{ use: "x509-svid", kty: "EC", x5c: [x5c] }], spiffe_refresh_hint: 300 });
  });
  // Another CA's certificate given by --caCertFile.
  const extra = await createSelfSignedCa({ org: "extra server CA", ttlMs: HOUR, keyAlgorithm: "ECDSA" });
  await Deno.writeTextFile(join(dir, "extra-ca.pem"), extra.certificatePem);

  const addresses = discoveryAddresses();
  // No plugged-in CA in it: the CA makes a self-signed root.
  await Deno.mkdir(join(dir, "no-plugged-in-ca"));
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      "--registries",
      "Mock",
      "--configDir",
      "examples/config",
      "--log_as_json",
      "--caCertFile",
      join(dir, "extra-ca.pem"),
    ]),
    {
      ROOT_CA_DIR: join(dir, "no-plugged-in-ca"),
      XDS_AUTH: "true",
      SPIFFE_BUNDLE_ENDPOINTS: `partner.example|https://127.0.0.1:${endpoint.addr.port}/bundle`,
      DENO_CERT: join(dir, "web-ca.pem"),
    },
  );
  const port = Number(addresses.secureGRPCAddr.split(":").at(-1));
  try {
    await server.waitFor(/"msg":"discovery server started"/);
    await server.waitFor(/federated trust domain bundle loaded.*"trustDomain":"partner.example"/);
    assert.ok(fetched >= 1);
    const roots = await (await fetch(`http://${addresses.httpAddr}/debug/ca_roots`)).text();

    await t.step("the roots that verify the discovery server include --caCertFile's", () => {
      assert.ok(roots.includes(extra.certificatePem.trim()));
      assert.ok(
        !roots.includes(partner.certificatePem.trim()),
        "a partner's root does not vouch for the server",
      );
    });
    await t.step("a partner workload with its bundle's certificate is served", async () => {
      const credentials = await clientCredentials(
        partner,
        "spiffe://partner.example/ns/example/sa/app",
        roots,
      );
      assert.equal(await outcome(port, credentials), "served");
    });
    await t.step("the partner's CA cannot speak for the mesh's own trust domain", async () => {
      const credentials = await clientCredentials(partner, "spiffe://cluster.local/ns/example/sa/app", roots);
      assert.match(await outcome(port, credentials), /^ended 16: XDS_AUTH: .*chains to the bundle of/);
    });
    await t.step("a CA that is neither the mesh's nor federated is not trusted", async () => {
      const stranger = await createSelfSignedCa({ org: "stranger", ttlMs: HOUR, keyAlgorithm: "ECDSA" });
      const credentials = await clientCredentials(
        stranger,
        "spiffe://stranger.example/ns/example/sa/app",
        roots,
      );
      assert.match(await outcome(port, credentials), /^ended 16: XDS_AUTH: .*no credential/);
    });
  } finally {
    await server.stop();
    await endpoint.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
