import assert from "node:assert/strict";
import type { ServiceInstance } from "../model/endpoint.ts";
import type { MeshNetworks } from "@mesh/shared/config/mesh/mesh_networks";
import { MeshNetworkIndex } from "../push/network_index.ts";
import { endpoint, service } from "../registry/_test_support.ts";
import { splitHorizon } from "./split_horizon.ts";

const svc = service("ratings.shop.svc.cluster.local", "shop");

function instance(address: string, clusterId: string, extra: { network?: string; locality?: string } = {}) {
  return {
    service: svc,
    servicePort: svc.ports[0],
    endpoint: endpoint(address, {
      locality: { label: extra.locality ?? "", clusterId },
      network: extra.network ?? "",
      tlsMode: "mesh",
    }),
  } satisfies ServiceInstance;
}

const TWO_NETWORKS: MeshNetworks = {
  networks: {
    n1: { endpoints: [{ fromRegistry: "c1" }], gateways: [{ address: "192.0.2.1", port: 15443 }] },
    n2: {
      endpoints: [{ fromRegistry: "c2" }],
      gateways: [{ address: "198.51.100.1", port: 15443 }, { address: "198.51.100.2", port: 15443 }],
    },
  },
};

const view = (list: readonly ServiceInstance[]) =>
  list.map((i) => `${i.endpoint.address}:${i.endpoint.endpointPort}@${i.endpoint.weight}`).sort();

Deno.test("splitHorizon keeps the proxy's network as it is and replaces another's endpoints by its gateways, weighted by what they stand for", () => {
  const networks = new MeshNetworkIndex(TWO_NETWORKS, [], "c1");
  const instances = [
    instance("10.1.0.1", "c1"),
    instance("10.1.0.2", "c1"),
    instance("10.2.0.1", "c2"),
    instance("10.2.0.2", "c2"),
    instance("10.2.0.3", "c2"),
  ];
  // Gateway counts 1 and 2 make every weight a multiple of 2; n2's 3 endpoints × 2 split over 2 gateways.
  assert.deepEqual(view(splitHorizon(instances, "n1", networks)), [
    "10.1.0.1:8080@2",
    "10.1.0.2:8080@2",
    "198.51.100.1:15443@3",
    "198.51.100.2:15443@3",
  ]);
  assert.deepEqual(view(splitHorizon(instances, "n2", networks)), [
    "10.2.0.1:8080@2",
    "10.2.0.2:8080@2",
    "10.2.0.3:8080@2",
    "192.0.2.1:15443@4",
  ]);
});

Deno.test("splitHorizon drops a network without a gateway and endpoints without mesh mTLS on other networks", () => {
  const networks = new MeshNetworkIndex(
    {
      networks: {
        n1: { endpoints: [{ fromRegistry: "c1" }], gateways: [] },
        n2: { endpoints: [{ fromCidr: "10.2.0.0/16" }], gateways: [] },
        n3: { endpoints: [{ fromRegistry: "c3" }], gateways: [{ address: "203.0.113.9", port: 443 }] },
      },
    },
    [],
    "c1",
  );
  const plain = instance("10.3.0.2", "c3");
  const instances = [
    instance("10.1.0.1", "c1"),
    instance("10.2.0.1", "c9"),
    instance("10.3.0.1", "c3"),
    { ...plain, endpoint: { ...plain.endpoint, tlsMode: "disabled" as const } },
  ];
  assert.deepEqual(view(splitHorizon(instances, "n1", networks)), ["10.1.0.1:8080@1", "203.0.113.9:443@1"]);
});

Deno.test("splitHorizon puts each gateway in the locality of the endpoints it replaces, and an endpoint's own label wins over its cluster's network", () => {
  const networks = new MeshNetworkIndex(TWO_NETWORKS, [], "c1");
  const out = splitHorizon(
    [
      instance("10.2.0.1", "c2", { locality: "r/a" }),
      instance("10.2.0.2", "c2", { locality: "r/b" }),
      instance("10.2.0.3", "c2", { locality: "r/b" }),
      instance("10.2.0.4", "c2", { network: "n1" }),
    ],
    "n1",
    networks,
  );
  const byLocality = (label: string) =>
    out.filter((i) => i.endpoint.locality.label === label).map((i) =>
      `${i.endpoint.address}@${i.endpoint.weight}`
    );
  assert.deepEqual(byLocality("r/a"), ["198.51.100.1@1", "198.51.100.2@1"]);
  assert.deepEqual(byLocality("r/b"), ["198.51.100.1@2", "198.51.100.2@2"]);
  assert.deepEqual(byLocality(""), ["10.2.0.4@2"]);
});
