/**
 * `DISCOVERY_CERT_PROVIDER=orchestrator` end to end: the real `mesh-discovery`, run in a directory where the
 * orchestrator's CA is mounted beside the service account, has its serving certificate signed through the
 * test API server's CertificateSigningRequest API (the signer played by the test with the orchestrator's CA)
 * instead of by its own CA, and serves it on the webhook port; openssl verifies it against the orchestrator's
 * CA, not the mesh's, and the webhook configuration's caBundle carries the orchestrator's CA.
 */
import assert from "node:assert/strict";
import { certificatesToPem, issueCertificate } from "../shared/pki/mod.ts";
import { OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { playSigner } from "../shared/testing/orch_test_signer.ts";
import { openssl, verifyChain } from "../shared/testing/openssl.ts";
import { makePluggedInCa, writePluggedInCa } from "../shared/testing/plugged_in_ca.ts";
import { KUBECTL, needs, OPENSSL } from "../shared/testing/system_tools.ts";
import { waitFor } from "../shared/testing/wait_for.ts";
import { discoveryAddresses, discoveryArgs, orchestratorFlags, startProgram } from "./helpers/programs.ts";

const DAY = 24 * 3_600_000;
const MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/mesh-sidecar-injector";
/** The example webhook configurations a user installs. */
const EXAMPLE_WEBHOOKS = new URL("../examples/orchestrator/webhooks.yaml", import.meta.url).pathname;
/** The leaf certificate a TLS server at `addr` presents, PEM, as openssl's client receives it. */
async function servedLeaf(addr: string): Promise<string> {
  const shown = await openssl(["s_client", "-connect", addr, "-servername", "localhost", "-showcerts"], "");
  const leaf = shown.stdout.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\n/);
  assert.ok(leaf, `no certificate from ${addr}: ${shown.stderr}`);
  return leaf[0];
}

Deno.test(
  "With DISCOVERY_CERT_PROVIDER=orchestrator the discovery server's certificate is signed by the orchestrator's CA",
  needs(KUBECTL, OPENSSL),
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "mesh_cert_provider_e2e_" });
    const mesh = await makePluggedInCa(30 * DAY);
    await Deno.mkdir(`${dir}/mesh-ca`);
    await writePluggedInCa(mesh, `${dir}/mesh-ca`);
    const orchestrator = await makePluggedInCa(30 * DAY);
    await Deno.mkdir(`${dir}/var/run/secrets/kubernetes.io/serviceaccount`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/var/run/secrets/kubernetes.io/serviceaccount/ca.crt`,
      orchestrator.files["root-cert.pem"],
    );

    const api = OrchApiServer.start();
    const { approved } = playSigner(
      api,
      "kubernetes.io/legacy-unknown",
      async (csrPem) =>
        certificatesToPem([
          await issueCertificate(orchestrator.intermediate, {
            csr: csrPem,
            dnsNames: ["localhost"],
            ttlMs: DAY,
          }),
        ]) + orchestrator.files["ca-cert.pem"],
    );
    await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
    const applied = await new Deno.Command("kubectl", {
      args: [
        "--kubeconfig",
        `${dir}/kubeconfig`,
        "--cache-dir",
        `${dir}/cache`,
        "apply",
        "--validate=false",
        "-f",
        EXAMPLE_WEBHOOKS,
      ],
      env: { HOME: dir },
      stdin: "null",
    }).output();
    assert.equal(applied.code, 0, new TextDecoder().decode(applied.stderr));
    const addresses = discoveryAddresses();
    const server = startProgram(
      "mesh-discovery",
      discoveryArgs(addresses, [
        ...orchestratorFlags(`${dir}/kubeconfig`),
        "--log_as_json",
      ]),
      { ROOT_CA_DIR: `${dir}/mesh-ca`, DISCOVERY_CERT_PROVIDER: "orchestrator" },
      dir,
    );
    try {
      await server.waitFor(/"msg":"discovery server started"/, 60_000);
      assert.ok(approved.length >= 1, "the serving certificate's CSR went through the orchestrator's API");
      const leaf = await servedLeaf(addresses.httpsAddr);
      const untrusted = ["-untrusted", `${dir}/orchestrator-ca.pem`];
      await Deno.writeTextFile(`${dir}/orchestrator-ca.pem`, orchestrator.files["ca-cert.pem"]);
      const verified = await verifyChain(dir, orchestrator.files["root-cert.pem"], leaf, untrusted);
      assert.equal(verified.code, 0, verified.stderr);
      const byMesh = await verifyChain(dir, mesh.files["root-cert.pem"], leaf, untrusted);
      assert.notEqual(byMesh.code, 0, "the mesh CA did not sign it");
      const caBundle = async () => {
        const response = await fetch(`${api.url}${MUTATING}`);
        const hooks = await response.json() as { webhooks: { clientConfig: { caBundle?: string } }[] };
        return atob(hooks.webhooks[0].clientConfig.caBundle ?? "");
      };
      await waitFor(
        async () => await caBundle() !== "",
        "the injection webhook's caBundle to be written",
        30_000,
      );
      assert.equal(await caBundle(), orchestrator.files["root-cert.pem"]);
    } finally {
      await server.stop();
      await api.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
