import assert from "node:assert/strict";
import type { ServiceEntrySpec } from "@mesh/shared/config/networking/service_entry";
import { networking } from "../_test_support.ts";
import { convertServices, workloadInstances } from "./convert_service_entry.ts";

/** Every object reachable from `value` that is not frozen, by path. */
function unfrozen(value: unknown, path = "endpoint"): string[] {
  if (value === null || typeof value !== "object") return [];
  const own = Object.isFrozen(value) ? [] : [path];
  return own.concat(...Object.entries(value).map(([key, v]) => unfrozen(v, `${path}.${key}`)));
}

Deno.test("A converted endpoint is frozen through, every object it holds included", () => {
  const resource = networking<ServiceEntrySpec>("ServiceEntry", "ns", "se", {
    hosts: ["a.ns.example", "b.ns.example"],
    ports: [{ number: 80, name: "http", protocol: "HTTP" }, { number: 90, name: "grpc", targetPort: 9090 }],
    resolution: "STATIC",
  });
  const services = convertServices(resource, { clusterId: "c1", defaultExportTo: ["*"] });
  const instances = workloadInstances(resource, services, {
    address: "10.0.0.1",
    labels: { app: "a", "security.mesh.io/tlsMode": "mesh" },
    locality: "region/zone",
    network: "n1",
    ports: { http: 8080 },
    serviceAccount: "sa",
    weight: 3,
  }, { namespace: "ns", workloadName: "w", clusterId: "c1" });
  assert.equal(instances.length, 4);
  for (const instance of instances) {
    assert.ok(Object.isFrozen(instance));
    assert.deepEqual(unfrozen(instance.endpoint), []);
  }
  assert.equal(instances[0].endpoint.endpointPort, 8080);
  assert.equal(instances[1].endpoint.endpointPort, 9090);
});
