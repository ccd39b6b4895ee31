/**
 * A self-signed root rotating under a running `mesh-discovery`: the secure port keeps trusting the old root
 * and starts trusting the new one without a restart, so a workload whose certificate the new root signed
 * proves its identity with it.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import * as jose from "jose";
import {
  caServiceDefinition,
  type CertificateResponseMessage,
  MESH_CA_SERVICE,
} from "../proto/ca_service.ts";
import { createCertificateRequest, exportPrivateKeyPem, generateKeyPair } from "../shared/pki/mod.ts";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;

Deno.test("After a root rotation the secure port trusts client certificates of the new root, without a restart", async () => {
  const { publicKey, privateKey } = await jose.generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k", alg: "RS256" };
  let issuerUrl = "";
  const issuer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req): Response => {
    if (new URL(req.url).pathname.endsWith("openid-configuration")) {
      return Response.json({ issuer: issuerUrl, jwks_uri: `${issuerUrl}/keys` });
    }
    return Response.json({ keys: [jwk] });
  });
  issuerUrl = `http://127.0.0.1:${issuer.addr.port}`;
  // No plugged-in CA in it: the CA makes a self-signed root.
  const noPluggedInCa = await Deno.makeTempDir({ prefix: "mesh_no_ca_dir_" });
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, ["--registries", "Mock", "--configDir", "examples/config", "--log_as_json"]),
    {
      ROOT_CA_DIR: noPluggedInCa,
      TOKEN_ISSUER: issuerUrl,
      // A 60 s root rotated once 5% of its life is gone, checked every second: a new root every few seconds,
      // each trusted until it expires.
      CASERVER_SELF_SIGNED_CA_CERT_TTL: "60s",
      CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: "95",
      CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: "1s",
      DEFAULT_WORKLOAD_CERT_TTL: "30s",
    },
  );
  const clients: grpc.Client[] = [];
  const create = (credentials: grpc.ChannelCredentials, metadata = new grpc.Metadata()) => {
    const Client = grpc.makeGenericClientConstructor(caServiceDefinition(MESH_CA_SERVICE), MESH_CA_SERVICE);
    const client = new Client(addresses.secureGRPCAddr, credentials, {
      "grpc.ssl_target_name_override": "localhost",
    });
    clients.push(client);
    return async (csr: string) =>
      await new Promise<CertificateResponseMessage>((resolve, reject) =>
        // deno-lint-ignore no-explicit-any
        (client as any).CreateCertificate(
          { csr, validityDuration: 20 },
          metadata,
          (error: grpc.ServiceError | null, response: CertificateResponseMessage) =>
            error ? reject(error) : resolve(response),
        )
      );
  };
  const roots = async () => await (await fetch(`http://${addresses.httpAddr}/debug/ca_roots`)).text();
  try {
    await server.waitFor(/"msg":"discovery server started"/);
    const firstRoot = await roots();
    await server.waitFor(/CA rotated its self-signed root/, 20_000);
    await server.waitFor(/serves new connections with updated TLS/, 20_000);

    // A certificate from the CA as it signs now (a root made after startup), obtained with a JWT.
    const token = await new jose.SignJWT({ sub: "system:serviceaccount:shop:ratings", aud: "mesh-ca" })
      .setProtectedHeader({ alg: "RS256", kid: "k" }).setIssuer(issuerUrl).setExpirationTime("1h")
      .sign(privateKey);
    const bearer = new grpc.Metadata();
    bearer.set("authorization", `Bearer ${token}`);
    const keys = await generateKeyPair({ algorithm: "ECDSA" });
    const csr = await createCertificateRequest(keys, { uris: [] });
    const trusted = await roots();
    const { certChain } = await create(grpc.credentials.createSsl(Buffer.from(trusted)), bearer)(csr);
    assert.ok(!firstRoot.includes(certChain.at(-1)!), "the certificate chains to a root made after startup");
    assert.ok((trusted.match(PEM_CERT) ?? []).length >= 2, "the old roots are still trusted");

    // The same workload proves itself with that certificate alone, on a new connection.
    const withCert = grpc.credentials.createSsl(
      Buffer.from(await roots()),
      Buffer.from(await exportPrivateKeyPem(keys.privateKey)),
      Buffer.from(certChain.slice(0, -1).join("")),
    );
    const second = await create(withCert)(
      await createCertificateRequest(await generateKeyPair({ algorithm: "ECDSA" }), { uris: [] }),
    );
    assert.ok(
      second.certChain.length >= 2,
      "a certificate was issued to the caller the new root vouches for",
    );
  } finally {
    for (const client of clients) client.close();
    await server.stop();
    await issuer.shutdown();
    await Deno.remove(noPluggedInCa, { recursive: true });
  }
});
