import assert from "node:assert/strict";
import { endpointsFromSlices, sliceServiceKey } from "./endpoint_slices.ts";
import type { OrchEndpointSlice } from "./orch_objects.ts";

const slice = (name: string, extra: Partial<OrchEndpointSlice>): OrchEndpointSlice => ({
  metadata: { name, namespace: "shop", labels: { "kubernetes.io/service-name": "ratings" } },
  addressType: "IPv4",
  ...extra,
});

Deno.test("A slice belongs to the service its label names", () => {
  assert.equal(sliceServiceKey(slice("ratings-abc", {})), "shop/ratings");
  assert.equal(sliceServiceKey({ metadata: { name: "orphan", namespace: "shop" } }), undefined);
});

Deno.test("A service's slices merge into one Endpoints: ready and not-ready addresses, ports per slice", () => {
  const endpoints = endpointsFromSlices("shop", "ratings", [
    slice("ratings-b", {
      endpoints: [{ addresses: ["10.0.0.3"], conditions: { ready: false }, nodeName: "node-2" }],
      ports: [{ name: "http", port: 9080, protocol: "TCP" }],
    }),
    slice("ratings-a", {
      endpoints: [
        {
          addresses: ["10.0.0.1"],
          conditions: { ready: true },
          targetRef: { kind: "Pod", name: "ratings-1" },
        },
        { addresses: ["10.0.0.2"] },
      ],
      ports: [{ name: "http", port: 9080 }],
    }),
    slice("ratings-fqdn", { addressType: "FQDN", endpoints: [{ addresses: ["db.example.com"] }] }),
  ]);
  assert.deepEqual(endpoints, {
    metadata: { name: "ratings", namespace: "shop" },
    subsets: [
      {
        addresses: [{ ip: "10.0.0.1", targetRef: { kind: "Pod", name: "ratings-1" } }, { ip: "10.0.0.2" }],
        notReadyAddresses: [],
        ports: [{ name: "http", port: 9080 }],
      },
      {
        addresses: [],
        notReadyAddresses: [{ ip: "10.0.0.3", nodeName: "node-2" }],
        ports: [{ name: "http", port: 9080, protocol: "TCP" }],
      },
    ],
  });
});
