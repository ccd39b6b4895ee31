/**
 * An external control plane end to end (`EXTERNAL_MESHD`, `USE_REMOTE_CERTS`): the real `mesh-discovery` runs
 * outside the clusters it serves. It reads the config cluster named by `--orchconfig`, takes its CA from that
 * cluster's `cacerts` Secret instead of local files, and keeps the webhook configurations' caBundle and the root
 * certificate ConfigMaps in the config cluster and in the remote cluster its Secret names.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createCertificateRequest, generateKeyPair } from "../shared/pki/mod.ts";
import { makePluggedInCa } from "../shared/testing/plugged_in_ca.ts";
import { verifyChain } from "../shared/testing/openssl.ts";
import { type ApiObject, OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { needs, OPENSSL } from "../shared/testing/system_tools.ts";
import { waitFor } from "../shared/testing/wait_for.ts";
import { discoveryAddresses, discoveryArgs, orchestratorFlags, startProgram } from "./helpers/programs.ts";
import { clusterSecret, requestCertificate } from "./helpers/two_clusters.ts";

const GROUP = "/apis/admissionregistration.k8s.io/v1";
const MUTATING = `${GROUP}/mutatingwebhookconfigurations/mesh-sidecar-injector`;
const VALIDATING = `${GROUP}/validatingwebhookconfigurations/meshd-mesh-system`;

type Hooks = { webhooks: { clientConfig: { caBundle?: string } }[] };

/** The two webhook configurations a user installs, without caBundle, and the namespaces of a cluster. */
function install(api: OrchApiServer, namespaces: string[]): void {
  for (const name of namespaces) {
    api.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name }, status: { phase: "Active" } });
  }
  const hook = (name: string) => ({
    name,
    clientConfig: { url: "https://meshd.example.com:15017/" },
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    failurePolicy: "Ignore",
  });
  api.apply({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: "mesh-sidecar-injector" },
    webhooks: [hook("sidecar-injector.mesh.io")],
  });
  api.apply({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "meshd-mesh-system" },
    webhooks: [hook("validation.mesh.io")],
  });
}

async function get<T>(api: OrchApiServer, path: string): Promise<T | undefined> {
  const response = await fetch(`${api.url}${path}`);
  if (response.status !== 200) {
    await response.body?.cancel();
    return undefined;
  }
  return await response.json() as T;
}

/** The root ConfigMap's PEM in `namespace` of `api`, empty while there is none. */
async function rootCertIn(api: OrchApiServer, namespace: string): Promise<string> {
  const map = await get<{ data?: Record<string, string> }>(
    api,
    `/api/v1/namespaces/${namespace}/configmaps/mesh-ca-root-cert`,
  );
  return map?.data?.["root-cert.pem"] ?? "";
}

/** The caBundle of both webhook configurations of `api`, decoded. */
async function bundlesIn(api: OrchApiServer): Promise<string[]> {
  const hooks = [await get<Hooks>(api, MUTATING), await get<Hooks>(api, VALIDATING)];
  return hooks.map((h) => Buffer.from(h?.webhooks[0].clientConfig.caBundle ?? "", "base64").toString("utf8"));
}

Deno.test(
  "An external control plane takes its CA from the config cluster's cacerts Secret and keeps the webhooks and root ConfigMaps of the config and remote clusters",
  needs(OPENSSL),
  async () => {
    const config = OrchApiServer.start();
    const remote = OrchApiServer.start();
    const dir = await Deno.makeTempDir({ prefix: "mesh_external_cp_e2e_" });
    const plugged = await makePluggedInCa(24 * 3_600_000);
    const rootPem = plugged.files["root-cert.pem"];
    install(config, ["mesh-system", "shop"]);
    install(remote, ["mesh-system", "orders"]);
    const cacerts: ApiObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "cacerts", namespace: "mesh-system" },
      data: Object.fromEntries(
        Object.entries(plugged.files).map(([key, pem]) => [key, Buffer.from(pem).toString("base64")]),
      ),
    };
    config.apply(cacerts);
    config.apply(clusterSecret(remote.kubeconfig()));
    await Deno.writeTextFile(`${dir}/kubeconfig`, config.kubeconfig());
    const addresses = discoveryAddresses();
    const server = startProgram(
      "mesh-discovery",
      discoveryArgs(addresses, [
        ...orchestratorFlags(`${dir}/kubeconfig`),
        "--clusterRegistriesNamespace",
        "mesh-system",
        "--log_as_json",
      ]),
      { CLUSTER_ID: "c1", EXTERNAL_MESHD: "true", USE_REMOTE_CERTS: "true" },
    );
    try {
      await server.waitFor(/"msg":"discovery server started"/);
      assert.match(server.stdout + server.stderr, /CA certificates found in the orchestrator/);
      const clusters = [
        { name: "the config cluster", api: config, namespaces: ["mesh-system", "shop"] },
        { name: "the remote cluster", api: remote, namespaces: ["mesh-system", "orders"] },
      ];
      for (const { name, api, namespaces } of clusters) {
        for (const namespace of namespaces) {
          await waitFor(
            async () => await rootCertIn(api, namespace) === rootPem,
            `the root ConfigMap in ${namespace} of ${name}`,
          );
        }
        await waitFor(
          async () => (await bundlesIn(api)).every((bundle) => bundle === rootPem),
          `both webhooks' caBundle in ${name}`,
        );
      }
      // A namespace created in the remote cluster later gets its ConfigMap too.
      remote.apply({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "late" },
        status: { phase: "Active" },
      });
      await waitFor(async () => await rootCertIn(remote, "late") === rootPem, "the root ConfigMap in late");

      // Workloads get certificates from the Secret's intermediate, which the root every cluster holds verifies.
      const csr = await createCertificateRequest(await generateKeyPair({ algorithm: "ECDSA" }), {
        uris: ["spiffe://cluster.local/ns/shop/sa/ratings"],
      });
      const token = config.tokenReviews.issue("shop", "ratings", ["mesh-ca"]);
      const { certChain } = await requestCertificate(addresses.secureGRPCAddr, rootPem, csr, token);
      await Deno.writeTextFile(`${dir}/chain.pem`, certChain.slice(1).join(""));
      const verified = await verifyChain(dir, rootPem, certChain[0], ["-untrusted", `${dir}/chain.pem`]);
      assert.equal(verified.code, 0, verified.stderr);
    } finally {
      await server.stop();
      await config.close();
      await remote.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
