/**
 * The orchestrator signer end to end: the real `mesh-discovery` with `EXTERNAL_CA=MESHD_RA_ORCH_API` forwards
 * a workload's CSR to the test API server's CertificateSigningRequest API, approves it, waits for the signer
 * (played by the test, with a CA of its own) and answers the workload with the signed chain and the external
 * CA's root, which openssl verifies.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import {
  caServiceDefinition,
  type CertificateResponseMessage,
  MESH_CA_SERVICE,
} from "../proto/ca_service.ts";
import {
  certificatesToPem,
  createCertificateRequest,
  exportPrivateKeyPem,
  generateKeyPair,
  issueCertificate,
} from "../shared/pki/mod.ts";
import { OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { playSigner } from "../shared/testing/orch_test_signer.ts";
import { certificateText, verifyChain } from "../shared/testing/openssl.ts";
import { makePluggedInCa, writePluggedInCa } from "../shared/testing/plugged_in_ca.ts";
import { needs, OPENSSL } from "../shared/testing/system_tools.ts";
import { discoveryAddresses, discoveryArgs, orchestratorFlags, startProgram } from "./helpers/programs.ts";

const DAY = 24 * 3_600_000;
const RATINGS = "spiffe://cluster.local/ns/shop/sa/ratings";
const SIGNER = "example.com/mesh-workloads";

Deno.test(
  "A workload's CSR is signed through the orchestrator's CSR API when EXTERNAL_CA=MESHD_RA_ORCH_API",
  needs(OPENSSL),
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "mesh_ca_orch_signer_e2e_" });
    // The server's own CA (its serving certificates) and the external CA the orchestrator's signer uses.
    const own = await makePluggedInCa(30 * DAY);
    await Deno.mkdir(`${dir}/own`);
    await writePluggedInCa(own, `${dir}/own`);
    const external = await makePluggedInCa(30 * DAY);
    await Deno.writeTextFile(`${dir}/external-root.pem`, external.files["root-cert.pem"]);
    await Deno.writeTextFile(`${dir}/external-ca.pem`, external.files["ca-cert.pem"]);

    const api = OrchApiServer.start();
    const { approved } = playSigner(
      api,
      SIGNER,
      async (csrPem) =>
        certificatesToPem([
          await issueCertificate(external.intermediate, { csr: csrPem, uris: [RATINGS], ttlMs: DAY }),
        ]) +
        external.files["ca-cert.pem"],
    );
    await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
    const addresses = discoveryAddresses();
    const server = startProgram(
      "mesh-discovery",
      discoveryArgs(addresses, [
        ...orchestratorFlags(`${dir}/kubeconfig`),
        "--caCertFile",
        `${dir}/external-root.pem`,
        "--log_as_json",
      ]),
      { ROOT_CA_DIR: `${dir}/own`, EXTERNAL_CA: "MESHD_RA_ORCH_API", ORCH_SIGNER: SIGNER },
    );
    // The workload proves its identity with a certificate of the external CA, as it would after its first one.
    const keys = await generateKeyPair({ algorithm: "ECDSA" });
    const clientCert = await issueCertificate(external.intermediate, {
      publicKey: keys.publicKey,
      uris: [RATINGS],
      ttlMs: DAY,
    });
    const Client = grpc.makeGenericClientConstructor(caServiceDefinition(MESH_CA_SERVICE), MESH_CA_SERVICE);
    const client = new Client(
      addresses.secureGRPCAddr,
      grpc.credentials.createSsl(
        Buffer.from(own.files["root-cert.pem"]),
        Buffer.from(await exportPrivateKeyPem(keys.privateKey)),
        Buffer.from(certificatesToPem([clientCert]) + external.files["ca-cert.pem"]),
      ),
      { "grpc.ssl_target_name_override": "localhost" },
    );
    try {
      await server.waitFor(/"msg":"discovery server started"/);
      const csr = await createCertificateRequest(await generateKeyPair({ algorithm: "ECDSA" }), {
        uris: [RATINGS],
      });
      const { certChain } = await new Promise<CertificateResponseMessage>((resolve, reject) =>
        // deno-lint-ignore no-explicit-any
        (client as any).CreateCertificate(
          { csr, validityDuration: 3600 },
          new grpc.Metadata(),
          (error: grpc.ServiceError | null, response: CertificateResponseMessage) =>
            error ? reject(error) : resolve(response),
        )
      );
      assert.equal(approved.length, 1, "one CSR went through the orchestrator's API");
      assert.equal(certChain.at(-1), external.files["root-cert.pem"], "the external CA's root last");
      const verified = await verifyChain(dir, external.files["root-cert.pem"], certChain[0], [
        "-untrusted",
        `${dir}/external-ca.pem`,
      ]);
      assert.equal(verified.code, 0, verified.stderr);
      assert.match(
        await certificateText(certChain[0]),
        /URI:spiffe:\/\/cluster\.local\/ns\/shop\/sa\/ratings/,
      );
      const leftover = await fetch(`${api.url}/apis/certificates.k8s.io/v1/certificatesigningrequests`);
      assert.deepEqual(
        (await leftover.json() as { items: unknown[] }).items,
        [],
        "the CSR object was deleted",
      );
    } finally {
      client.close();
      await server.stop();
      await api.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
