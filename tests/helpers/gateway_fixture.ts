/**
 * Test support for gateway end-to-end tests: a Gateway with a MUTUAL HTTPS server on 8443 naming the
 * credential `shop-cert` in namespace `edge`, credential folders as an orchestrator mounts TLS Secrets, client
 * credentials for the secure port, and a fetch that acknowledges until a condition holds.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import {
  certificatesToPem,
  exportPrivateKeyPem,
  generateKeyPair,
  issueCertificate,
} from "../../shared/pki/mod.ts";
import { makePluggedInCa, type PluggedInCa, writePluggedInCa } from "../../shared/testing/plugged_in_ca.ts";
import {
  plainResource as plain,
  type TestAdsClient as Client,
  type testNode,
} from "../../discovery/xds/_test_ads_client.ts";

type Obj = Record<string, unknown>;
const DAY = 24 * 3_600_000;

/** A Gateway in `edge` selecting `app: ingress`, serving shop.example.com on 8443 with `shop-cert` (MUTUAL). */
export const MUTUAL_GATEWAY_YAML = [
  "apiVersion: networking.mesh.io/v1beta1",
  "kind: Gateway",
  "metadata: { name: public, namespace: edge }",
  "spec:",
  "  selector: { app: ingress }",
  "  servers:",
  "  - port: { number: 8443, name: https, protocol: HTTPS }",
  "    hosts: [shop.example.com]",
  "    tls: { mode: MUTUAL, credentialName: shop-cert }",
  "",
].join("\n");

/** Writes `ca`'s intermediate certificate and key, and its root as the client CA, into `folder`. */
export async function writeCredentialFolder(folder: string, ca: PluggedInCa): Promise<void> {
  await Deno.mkdir(folder, { recursive: true });
  await Deno.writeTextFile(`${folder}/tls.key`, ca.files["ca-key.pem"]);
  await Deno.writeTextFile(`${folder}/tls.crt`, ca.files["ca-cert.pem"]);
  await Deno.writeTextFile(`${folder}/ca.crt`, ca.files["root-cert.pem"]);
}

/** Asks `stream` for `names` of `typeUrl` as `node`, acknowledging every response, until `until` holds. */
export async function fetchUntil(
  stream: Client,
  node: ReturnType<typeof testNode>,
  typeUrl: string,
  names: string[],
  until: (r: Obj[]) => boolean,
): Promise<Obj[]> {
  stream.send({ node, type_url: typeUrl, resource_names: names });
  for (;;) {
    const r = await stream.next(20_000);
    stream.send({
      node,
      type_url: r.typeUrl,
      version_info: r.version,
      response_nonce: r.nonce,
      resource_names: names,
    });
    const resources = r.resources.map(plain);
    if (r.typeUrl === typeUrl && until(resources)) return resources;
  }
}

/** Client credentials for the secure port, as `identity`, issued by a plugged-in CA written to `caDir`. */
export async function credentialsAs(identity: string, caDir: string): Promise<grpc.ChannelCredentials> {
  const plugged = await makePluggedInCa(30 * DAY);
  await writePluggedInCa(plugged, caDir);
  return credentialsFrom(plugged, identity);
}

/** Client credentials for the secure port, as `identity`, issued by `plugged`. */
export async function credentialsFrom(
  plugged: PluggedInCa,
  identity: string,
): Promise<grpc.ChannelCredentials> {
  const keys = await generateKeyPair({ algorithm: "ECDSA" });
  const cert = await issueCertificate(plugged.intermediate, {
    publicKey: keys.publicKey,
    uris: [identity],
    ttlMs: DAY,
  });
  return grpc.credentials.createSsl(
    Buffer.from(plugged.files["root-cert.pem"]),
    Buffer.from(await exportPrivateKeyPem(keys.privateKey)),
    Buffer.from(certificatesToPem([cert]) + plugged.files["ca-cert.pem"]),
  );
}
