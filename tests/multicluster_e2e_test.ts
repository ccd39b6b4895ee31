/**
 * Two clusters end to end: the real `mesh-discovery` reads the first test API server, and the second joins
 * through a Secret created in the first. A service in both clusters reaches a sidecar of cluster 1 with the
 * endpoints of both; with the clusters on two networks, cluster 2's endpoints become its gateway's address,
 * weighted by how many they are; deleting the Secret takes them away; a cluster 2 that stops answering leaves
 * cluster 1 served and its changes pushed.
 */
import assert from "node:assert/strict";
import { OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { TestAdsClient, testNode } from "../discovery/xds/_test_ads_client.ts";
import {
  discoveryAddresses,
  discoveryArgs,
  orchestratorFlags,
  startProgram,
  untilReady,
} from "./helpers/programs.ts";
import { clusterSecret, EdsWatch, ratings, RATINGS_HOST } from "./helpers/two_clusters.ts";

const HOST = RATINGS_HOST;
const GATEWAY_HOST = "eastwest.mesh-system.svc.cluster.local";

const TWO_NETWORKS = [
  "networks:",
  "  n1:",
  "    endpoints: [{fromRegistry: c1}]",
  "    gateways: [{address: 192.0.2.1, port: 15443}]",
  "  n2:",
  "    endpoints: [{fromRegistry: c2}]",
  `    gateways: [{registryServiceName: ${GATEWAY_HOST}, port: 15443}]`,
  "",
].join("\n");

Deno.test("A second cluster joins by Secret: merged endpoints, split horizon through its gateway, removal, and an outage that leaves cluster 1 served", async () => {
  const first = OrchApiServer.start();
  const second = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_multicluster_e2e_" });
  ratings(first, "10.96.0.10", ["10.1.0.1"]);
  ratings(second, "10.97.0.10", ["10.2.0.1", "10.2.0.2"]);
  second.apply({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "eastwest", namespace: "mesh-system" },
    spec: { type: "LoadBalancer", clusterIP: "10.97.0.99", ports: [{ name: "tls", port: 15443 }] },
    status: { loadBalancer: { ingress: [{ ip: "198.51.100.7" }] } },
  });
  await Deno.writeTextFile(`${dir}/kubeconfig`, first.kubeconfig());
  await Deno.writeTextFile(`${dir}/networks.yaml`, "");
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      ...orchestratorFlags(`${dir}/kubeconfig`),
      "--networksConfig",
      `${dir}/networks.yaml`,
      "--clusterRegistriesNamespace",
      "mesh-system",
      "--log_as_json",
    ]),
    { CLUSTER_ID: "c1" },
  );
  let client: TestAdsClient | undefined;
  const http = `http://${addresses.httpAddr}`;
  try {
    await untilReady(addresses.httpAddr);
    client = TestAdsClient.sotw(Number(addresses.grpcAddr.split(":").at(-1)));
    const node = testNode("sidecar~10.9.9.9~app.shop~shop.svc.cluster.local", {
      NAMESPACE: "shop",
      CLUSTER_ID: "c1",
    });
    const eds = await EdsWatch.start(client, node);
    const edsUntil = (expected: string[], why: string) => eds.until(expected, why);
    await edsUntil(["10.1.0.1:9080@1"], "cluster 1 alone at first");

    // Bad Secrets beside the good one are refused alone: a kubeconfig that does not parse, a cluster id taken.
    first.apply({
      ...clusterSecret("clusters: [ {"),
      metadata: { ...clusterSecret("").metadata, name: "broken" },
    });
    first.apply(clusterSecret(second.kubeconfig()));
    await edsUntil(
      ["10.1.0.1:9080@1", "10.2.0.1:9080@1", "10.2.0.2:9080@1"],
      "one network: endpoints of both clusters",
    );
    first.apply({
      ...clusterSecret(second.kubeconfig()),
      metadata: { ...clusterSecret("").metadata, name: "again" },
    });
    await server.waitFor(/already added from Secret/);
    const metrics = await (await fetch(`http://${addresses.monitoringAddr}/metrics`)).text();
    assert.match(metrics, /discovery_remote_cluster_errors\{reason="kubeconfig"\} 1/);
    assert.match(metrics, /discovery_remote_cluster_errors\{reason="duplicate_cluster_id"\} 1/);
    assert.match(metrics, /discovery_remote_clusters 1/);
    first.delete("v1", "Secret", "mesh-system", "again");
    const registryz = await (await fetch(`${http}/debug/registryz?namespace=shop`)).json();
    assert.deepEqual(registryz[0].clusterAddresses, { c1: ["10.96.0.10"], c2: ["10.97.0.10"] });
    assert.deepEqual(
      registryz[0].endpoints.map((e: { address: string; cluster: string }) => `${e.address}/${e.cluster}`),
      ["10.1.0.1/c1", "10.2.0.1/c2", "10.2.0.2/c2"],
    );
    const clusterz = await (await fetch(`${http}/debug/clusterz`)).json();
    assert.equal(clusterz.local.clusterId, "c1");
    assert.deepEqual(clusterz.remote.map((c: { clusterId: string; state: string }) => c.state), ["synced"]);

    await Deno.writeTextFile(`${dir}/networks.yaml`, TWO_NETWORKS);
    // One gateway each: weights stay whole; cluster 2's two endpoints weigh 2 behind its gateway.
    await edsUntil(["10.1.0.1:9080@1", "198.51.100.7:15443@2"], "two networks: cluster 2 behind its gateway");
    const endpointz = await (await fetch(`${http}/debug/endpointz`)).json();
    const shop = endpointz.find((s: { hostname: string }) => s.hostname === HOST);
    assert.deepEqual(
      shop.instances.map((i: { address: string; cluster: string; network: string }) =>
        `${i.address}/${i.cluster}/${i.network}`
      ),
      ["10.1.0.1/c1/n1", "10.2.0.1/c2/n2", "10.2.0.2/c2/n2"],
    );

    first.delete("v1", "Secret", "mesh-system", "cluster2");
    await edsUntil(["10.1.0.1:9080@1"], "the Secret gone: cluster 2's endpoints gone");

    first.apply(clusterSecret(second.kubeconfig()));
    await edsUntil(["10.1.0.1:9080@1", "198.51.100.7:15443@2"], "cluster 2 back");
    await second.close();
    await server.waitFor(/"cluster":"c2"[^\n]*cannot be reached|list or watch failed/);
    ratings(first, "10.96.0.10", ["10.1.0.1", "10.1.0.2"]);
    await edsUntil(
      ["10.1.0.1:9080@1", "10.1.0.2:9080@1", "198.51.100.7:15443@2"],
      "cluster 1's change pushed while cluster 2 is down, cluster 2's last state kept",
    );
    const ready = await fetch(`${http}/ready`);
    await ready.body?.cancel();
    assert.equal(ready.status, 200, "still ready");
  } finally {
    client?.close();
    await server.stop();
    await first.close();
    await second.close().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("A remote cluster that cannot be reached at startup does not keep mesh-discovery unready", async () => {
  const first = OrchApiServer.start();
  const gone = OrchApiServer.start();
  const unreachable = gone.kubeconfig();
  await gone.close();
  const dir = await Deno.makeTempDir({ prefix: "mesh_multicluster_e2e_" });
  ratings(first, "10.96.0.10", ["10.1.0.1"]);
  first.apply(clusterSecret(unreachable));
  await Deno.writeTextFile(`${dir}/kubeconfig`, first.kubeconfig());
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      ...orchestratorFlags(`${dir}/kubeconfig`),
      "--clusterRegistriesNamespace",
      "mesh-system",
      "--log_as_json",
    ]),
    { CLUSTER_ID: "c1" },
  );
  const http = `http://${addresses.httpAddr}`;
  try {
    await server.waitFor(/remote cluster cannot be reached/);
    await server.waitFor(/"msg":"discovery server started"/);
    let status = 0;
    for (const deadline = Date.now() + 30_000; status !== 200 && Date.now() < deadline;) {
      const response = await fetch(`${http}/ready`);
      await response.body?.cancel();
      status = response.status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 200, "ready once the local cluster synced");
    const clusterz = await (await fetch(`${http}/debug/clusterz`)).json();
    assert.deepEqual(clusterz.local, { clusterId: "c1", state: "synced", unsynced: [] });
    assert.equal(clusterz.remote[0].clusterId, "c2");
    assert.equal(clusterz.remote[0].state, "unreachable");
  } finally {
    await server.stop();
    await first.close();
    await Deno.remove(dir, { recursive: true });
  }
});
