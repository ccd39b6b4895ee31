/**
 * Multi-primary end to end: two clusters (two test API servers), each with its own `mesh-discovery` reading both
 * (a Secret in each cluster names the other) and one plugged-in CA shared by both servers. A workload of each
 * cluster gets a certificate from its own server that the other cluster's workloads trust (the root the other
 * server writes into its cluster), and each server's sidecars see the endpoints of both clusters.
 */
import assert from "node:assert/strict";
import { createCertificateRequest, generateKeyPair } from "../shared/pki/mod.ts";
import { certificateText, verifyChain } from "../shared/testing/openssl.ts";
import { makePluggedInCa, writePluggedInCa } from "../shared/testing/plugged_in_ca.ts";
import { OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { needs, OPENSSL } from "../shared/testing/system_tools.ts";
import { waitFor } from "../shared/testing/wait_for.ts";
import { TestAdsClient, testNode } from "../discovery/xds/_test_ads_client.ts";
import {
  discoveryAddresses,
  discoveryArgs,
  orchestratorFlags,
  type RunningProgram,
  startProgram,
  untilReady,
} from "./helpers/programs.ts";
import { clusterSecret, EdsWatch, ratings, requestCertificate } from "./helpers/two_clusters.ts";

/** The root certificate ConfigMap's PEM in `namespace` of `api`, empty while there is none. */
async function rootCertIn(api: OrchApiServer, namespace: string): Promise<string> {
  const response = await fetch(`${api.url}/api/v1/namespaces/${namespace}/configmaps/mesh-ca-root-cert`);
  if (response.status !== 200) {
    await response.body?.cancel();
    return "";
  }
  return ((await response.json()) as { data?: Record<string, string> }).data?.["root-cert.pem"] ?? "";
}

Deno.test(
  "Two primaries sharing a plugged-in CA: each cluster's workload certificate is trusted in the other, and each server's sidecar sees both clusters' endpoints",
  needs(OPENSSL),
  async () => {
    const apis = [OrchApiServer.start(), OrchApiServer.start()];
    const dir = await Deno.makeTempDir({ prefix: "mesh_multi_primary_e2e_" });
    const servers: RunningProgram[] = [];
    const clients: TestAdsClient[] = [];
    try {
      const plugged = await makePluggedInCa(24 * 3_600_000);
      await Deno.mkdir(`${dir}/cacerts`);
      await writePluggedInCa(plugged, `${dir}/cacerts`);
      const ids = ["c1", "c2"];
      ratings(apis[0], "10.96.0.10", ["10.1.0.1"]);
      ratings(apis[1], "10.97.0.10", ["10.2.0.1"]);
      for (const [i, api] of apis.entries()) {
        api.apply({
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: "shop" },
          status: { phase: "Active" },
        });
        // Each cluster names the other as a remote.
        api.apply(clusterSecret(apis[1 - i].kubeconfig(), ids[1 - i], `cluster-${ids[1 - i]}`));
        await Deno.writeTextFile(`${dir}/kubeconfig-${ids[i]}`, api.kubeconfig());
      }
      const addresses = apis.map(() => discoveryAddresses());
      for (const [i, id] of ids.entries()) {
        servers.push(startProgram(
          "mesh-discovery",
          discoveryArgs(addresses[i], [
            ...orchestratorFlags(`${dir}/kubeconfig-${id}`),
            "--clusterRegistriesNamespace",
            "mesh-system",
            "--log_as_json",
          ]),
          { CLUSTER_ID: id, ROOT_CA_DIR: `${dir}/cacerts` },
        ));
      }
      await Promise.all(addresses.map((a) => untilReady(a.httpAddr)));

      // The root each server gives the workloads of its own cluster.
      const roots: string[] = [];
      for (const api of apis) {
        await waitFor(async () => await rootCertIn(api, "shop") !== "", "the root ConfigMap in shop");
        roots.push(await rootCertIn(api, "shop"));
      }
      for (const [i, id] of ids.entries()) {
        const csr = await createCertificateRequest(await generateKeyPair({ algorithm: "ECDSA" }), {
          uris: [`spiffe://cluster.local/ns/shop/sa/ratings-${id}`],
        });
        const token = apis[i].tokenReviews.issue("shop", `ratings-${id}`, ["mesh-ca"]);
        const { certChain } = await requestCertificate(addresses[i].secureGRPCAddr, roots[i], csr, token);
        assert.match(await certificateText(certChain[0]), new RegExp(`/sa/ratings-${id}`));
        await Deno.writeTextFile(`${dir}/chain-${id}.pem`, certChain.slice(1).join(""));
        const other = roots[1 - i];
        const verified = await verifyChain(dir, other, certChain[0], [
          "-untrusted",
          `${dir}/chain-${id}.pem`,
        ]);
        assert.equal(
          verified.code,
          0,
          `${id}'s certificate verified with ${ids[1 - i]}'s root: ${verified.stderr}`,
        );
      }

      for (const [i, id] of ids.entries()) {
        const client = TestAdsClient.sotw(Number(addresses[i].grpcAddr.split(":").at(-1)));
        clients.push(client);
        const node = testNode(`sidecar~10.9.9.${i + 1}~app.shop~shop.svc.cluster.local`, {
          NAMESPACE: "shop",
          CLUSTER_ID: id,
        });
        const eds = await EdsWatch.start(client, node);
        await eds.until(["10.1.0.1:9080@1", "10.2.0.1:9080@1"], `${id}'s server: both clusters' endpoints`);
      }
    } finally {
      for (const client of clients) client.close();
      await Promise.all(servers.map((server) => server.stop()));
      await Promise.all(apis.map((api) => api.close()));
      await Deno.remove(dir, { recursive: true });
    }
  },
);
