/**
 * The CA end to end: the real `mesh-discovery` with a plugged-in CA (`ROOT_CA_DIR`) and an OIDC issuer
 * (`TOKEN_ISSUER`) signs CSRs over its secure port for callers that prove who they are with a client
 * certificate or a JWT, for that identity alone; openssl verifies what it issues against the plugged-in root.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import * as jose from "jose";
import {
  caServiceDefinition,
  type CertificateResponseMessage,
  ISTIO_CA_SERVICE,
  MESH_CA_SERVICE,
} from "../proto/ca_service.ts";
import {
  certificatesToPem,
  createCertificateRequest,
  exportPrivateKeyPem,
  generateKeyPair,
  issueCertificate,
} from "../shared/pki/mod.ts";
import { certificateText, verifyChain } from "../shared/testing/openssl.ts";
import { makePluggedInCa, writePluggedInCa } from "../shared/testing/plugged_in_ca.ts";
import { needs, OPENSSL } from "../shared/testing/system_tools.ts";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";

const DAY = 24 * 3_600_000;
const RATINGS = "spiffe://cluster.local/ns/shop/sa/ratings";

Deno.test(
  "mesh-discovery's CA signs CSRs on the secure port for the caller's proven identity only",
  needs(OPENSSL),
  async (t) => {
    const dir = await Deno.makeTempDir({ prefix: "mesh_ca_e2e_" });
    const plugged = await makePluggedInCa(30 * DAY);
    await writePluggedInCa(plugged, dir);
    const rootPem = plugged.files["root-cert.pem"];

    // A local OIDC issuer for the JWT path.
    const { publicKey, privateKey } = await jose.generateKeyPair("RS256", { extractable: true });
    const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k", alg: "RS256" };
    let issuerUrl = "";
    const issuer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req): Response => {
      const path = new URL(req.url).pathname;
      if (path.endsWith("openid-configuration")) {
        return Response.json({ issuer: issuerUrl, jwks_uri: `${issuerUrl}/keys` });
      }
      return Response.json({ keys: [jwk] });
    });
    issuerUrl = `http://127.0.0.1:${issuer.addr.port}`;

    const addresses = discoveryAddresses();
    const server = startProgram(
      "mesh-discovery",
      discoveryArgs(addresses, ["--registries", "Mock", "--configDir", "examples/config", "--log_as_json"]),
      // Two requests per identity, refilled once in 1000 s: the third within the test is refused.
      {
        ROOT_CA_DIR: dir,
        TOKEN_ISSUER: issuerUrl,
        CASERVER_CSR_RATE_LIMIT_BURST: "2",
        CASERVER_CSR_RATE_LIMIT_QPS: "0.001",
      },
    );
    const clients: grpc.Client[] = [];
    const connect = (service: string, credentials: grpc.ChannelCredentials) => {
      const Client = grpc.makeGenericClientConstructor(caServiceDefinition(service), service);
      const client = new Client(addresses.secureGRPCAddr, credentials, {
        "grpc.ssl_target_name_override": "localhost",
      });
      clients.push(client);
      return (csr: string, metadata = new grpc.Metadata()) =>
        new Promise<CertificateResponseMessage>((resolve, reject) =>
          // deno-lint-ignore no-explicit-any
          (client as any).CreateCertificate(
            { csr, validityDuration: 3600 },
            metadata,
            (error: grpc.ServiceError | null, response: CertificateResponseMessage) =>
              error ? reject(error) : resolve(response),
          )
        );
    };
    // The CSR asks for an identity the caller does not have: the CA must ignore it.
    const csr = await createCertificateRequest(await generateKeyPair({ algorithm: "ECDSA" }), {
      uris: ["spiffe://cluster.local/ns/kube-system/sa/admin"],
    });
    try {
      await server.waitFor(/"msg":"discovery server started"/);

      await t.step(
        "with a client certificate: a chain openssl verifies, naming the certificate's identity",
        async () => {
          const keys = await generateKeyPair({ algorithm: "ECDSA" });
          const cert = await issueCertificate(plugged.intermediate, {
            publicKey: keys.publicKey,
            uris: [RATINGS],
            ttlMs: DAY,
          });
          const create = connect(
            MESH_CA_SERVICE,
            grpc.credentials.createSsl(
              Buffer.from(rootPem),
              Buffer.from(await exportPrivateKeyPem(keys.privateKey)),
              Buffer.from(certificatesToPem([cert]) + plugged.files["ca-cert.pem"]),
            ),
          );
          const { certChain } = await create(csr);
          assert.equal(certChain.at(-1), rootPem, "root last");
          const verified = await verifyChain(dir, rootPem, certChain[0], [
            "-untrusted",
            `${dir}/ca-cert.pem`,
          ]);
          assert.equal(verified.code, 0, verified.stderr);
          const text = await certificateText(certChain[0]);
          assert.match(text, /URI:spiffe:\/\/cluster\.local\/ns\/shop\/sa\/ratings/);
          assert.doesNotMatch(text, /kube-system/);
        },
      );

      await t.step("with a JWT, under Istio's service name: the token's service account", async () => {
        const token = await new jose.SignJWT({ sub: "system:serviceaccount:web:frontend", aud: "mesh-ca" })
          .setProtectedHeader({ alg: "RS256", kid: "k" }).setIssuer(issuerUrl).setExpirationTime("1h").sign(
            privateKey,
          );
        const metadata = new grpc.Metadata();
        metadata.set("authorization", `Bearer ${token}`);
        const create = connect(ISTIO_CA_SERVICE, grpc.credentials.createSsl(Buffer.from(rootPem)));
        const { certChain } = await create(csr, metadata);
        assert.match(
          await certificateText(certChain[0]),
          /URI:spiffe:\/\/cluster\.local\/ns\/web\/sa\/frontend/,
        );
      });

      await t.step(
        "an oversized CSR is refused as INVALID_ARGUMENT; past its burst an identity gets RESOURCE_EXHAUSTED",
        async () => {
          const keys = await generateKeyPair({ algorithm: "ECDSA" });
          const cert = await issueCertificate(plugged.intermediate, {
            publicKey: keys.publicKey,
            uris: ["spiffe://cluster.local/ns/shop/sa/reviews"],
            ttlMs: DAY,
          });
          const create = connect(
            MESH_CA_SERVICE,
            grpc.credentials.createSsl(
              Buffer.from(rootPem),
              Buffer.from(await exportPrivateKeyPem(keys.privateKey)),
              Buffer.from(certificatesToPem([cert]) + plugged.files["ca-cert.pem"]),
            ),
          );
          await assert.rejects(
            () => create(csr + " ".repeat(16_384)),
            (e: grpc.ServiceError) =>
              e.code === grpc.status.INVALID_ARGUMENT && /CASERVER_CSR_MAX_BYTES/.test(e.details),
          );
          await create(csr);
          await assert.rejects(
            () => create(csr),
            (e: grpc.ServiceError) =>
              e.code === grpc.status.RESOURCE_EXHAUSTED && /retry in \d+ ms/.test(e.details) &&
              Number(e.metadata.get("grpc-retry-pushback-ms")[0]) > 0,
          );
        },
      );

      await t.step("with neither: Unauthenticated", async () => {
        const create = connect(MESH_CA_SERVICE, grpc.credentials.createSsl(Buffer.from(rootPem)));
        await assert.rejects(
          () => create(csr),
          (e: grpc.ServiceError) => e.code === grpc.status.UNAUTHENTICATED,
        );
      });

      await t.step("the webhook port serves a certificate the same CA issued", async () => {
        const client = Deno.createHttpClient({ caCerts: [rootPem + plugged.files["ca-cert.pem"]] });
        try {
          const response = await fetch(
            `https://localhost:${addresses.httpsAddr.split(":").at(-1)}/httpsReady`,
            {
              client,
            },
          );
          assert.equal(response.status, 200);
          await response.body?.cancel();
        } finally {
          client.close();
        }
      });

      await t.step("the trusted roots are served for whoever must verify the discovery server", async () => {
        const response = await fetch(`http://${addresses.httpAddr}/debug/ca_roots`);
        assert.equal(await response.text(), rootPem);
      });
    } finally {
      for (const client of clients) client.close();
      await server.stop();
      await issuer.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
