import assert from "node:assert/strict";
import { parseProxy } from "../model/proxy.ts";
import { service } from "../registry/_test_support.ts";
import { MeshNetworkIndex } from "./network_index.ts";

Deno.test("MeshNetworkIndex takes registryServiceName gateways from the external addresses of that service in the network's clusters", () => {
  const gateway = service("gw.mesh-system.svc.cluster.local", "mesh-system", {
    externalAddresses: ["203.0.113.7", "gw.example.com"],
  });
  const networks = new MeshNetworkIndex({
    networks: {
      n2: {
        endpoints: [{ fromRegistry: "c2" }],
        gateways: [{ registryServiceName: "gw.mesh-system.svc.cluster.local", port: 15443 }],
      },
    },
  }, [
    {
      clusterId: "c1",
      getService: () =>
        service("gw.mesh-system.svc.cluster.local", "mesh-system", {
          externalAddresses: ["192.0.2.50"],
        }),
    },
    { clusterId: "c2", getService: (h) => h === gateway.hostname ? gateway : undefined },
  ], "c1");
  assert.deepEqual(networks.gateways("n2"), [
    { address: "203.0.113.7", port: 15443, clusterId: "c2", locality: "" },
  ]);
});

Deno.test("MeshNetworkIndex finds a proxy's network from its metadata, else its cluster, else its address", async (t) => {
  const networks = new MeshNetworkIndex(
    {
      networks: {
        n1: { endpoints: [{ fromRegistry: "c1" }], gateways: [] },
        n2: { endpoints: [{ fromRegistry: "c2" }, { fromCidr: "10.2.0.0/16" }], gateways: [] },
      },
    },
    [],
    "c1",
  );
  const proxy = (ip: string, metadata: Record<string, unknown>) =>
    parseProxy({ id: `sidecar~${ip}~a.shop~shop.svc.cluster.local`, metadata });
  await t.step(
    "metadata NETWORK",
    () => assert.equal(networks.networkOfProxy(proxy("10.2.0.1", { NETWORK: "n9" })), "n9"),
  );
  await t.step(
    "CLUSTER_ID",
    () => assert.equal(networks.networkOfProxy(proxy("10.1.0.1", { CLUSTER_ID: "c2" })), "n2"),
  );
  await t.step(
    "the server's cluster",
    () => assert.equal(networks.networkOfProxy(proxy("10.1.0.1", {})), "n1"),
  );
  const noLocal = new MeshNetworkIndex(
    {
      networks: { n2: { endpoints: [{ fromCidr: "10.2.0.0/16" }], gateways: [] } },
    },
    [],
    "c1",
  );
  await t.step("CIDR", () => assert.equal(noLocal.networkOfProxy(proxy("10.2.3.4", {})), "n2"));
});
