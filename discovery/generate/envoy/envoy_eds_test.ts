import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { structToJson } from "@mesh/proto/struct_json";
import { serviceKey } from "../../push/push_request.ts";
import { MeshNetworkIndex } from "../../push/network_index.ts";
import { GREETER, networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyEdsGenerator } from "./envoy_eds.ts";

type Obj = Record<string, unknown>;
const lbEndpoints = (assignment: Obj) =>
  (assignment.endpoints as Obj[]).flatMap((locality) => locality.lb_endpoints as Obj[]);

Deno.test("Envoy EDS lists each EDS cluster's endpoints by locality, subset by subset", () => {
  const push = new World().apply(...envoyResources()).push();
  const { byName, names } = run(envoyEdsGenerator, envoySidecar(), push);
  assert.ok(!names.some((n) => n.includes("db.example.com")), "DNS clusters have no EDS");
  const all = byName.get(`outbound|7070||${GREETER}`)!;
  assert.equal((all.endpoints as Obj[]).length, 2, "two zones");
  const v1 = lbEndpoints(byName.get(`outbound|7070|v1|${GREETER}`)!);
  assert.equal(v1.length, 1);
  assert.ok(JSON.stringify(v1[0]).includes("10.0.0.1"));
});

Deno.test("Envoy EDS marks endpoints with a sidecar for mesh mTLS and leaves the others plain", () => {
  const push = new World().apply(...envoyResources()).push();
  const { byName } = run(envoyEdsGenerator, envoySidecar(), push);
  const [ratings] = lbEndpoints(byName.get("outbound|8080||ratings.example.svc.cluster.local")!);
  const filter = ((ratings.metadata as Obj).filter_metadata as Obj)["envoy.transport_socket_match"];
  assert.deepEqual(structToJson(filter), { tlsMode: "istio" });
  for (const greeter of lbEndpoints(byName.get(`outbound|7070||${GREETER}`)!)) {
    assert.equal(greeter.metadata, undefined);
  }
});

Deno.test("Envoy EDS of an endpoint-only push names only the changed services' clusters", () => {
  const push = new World().apply(...envoyResources()).push();
  const { names } = run(envoyEdsGenerator, envoySidecar(), push, {
    full: false,
    configsUpdated: new Set([serviceKey("example", GREETER)]),
  });
  assert.deepEqual(
    new Set(names),
    new Set([
      `outbound|7070||${GREETER}`,
      `outbound|7070|v1|${GREETER}`,
      `outbound|7070|v2|${GREETER}`,
    ]),
  );
});

Deno.test("Every Envoy endpoint assignment encodes and passes Envoy's validation rules; its key differs from gRPC's", () => {
  const push = new World().apply(...envoyResources()).push();
  const { bytes, cacheable } = run(envoyEdsGenerator, envoySidecar(), push);
  assert.ok(bytes.size >= 5);
  for (const [name, encoded] of bytes) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
    assert.ok(cacheable.get(name)!.key.id.includes('"envoy"'), "sidecar bytes never served to gRPC clients");
  }
});

Deno.test("Envoy EDS splits by network: another network's endpoints become its gateway, and the proxy's network is in its shape and key", async () => {
  const { MeshNetworkIndex } = await import("../../push/network_index.ts");
  const { networking } = await import("../../registry/_test_support.ts");
  const { parseProxy } = await import("../../model/proxy.ts");
  const world = new World().apply(
    ...envoyResources(),
    networking("WorkloadEntry", "example", "ratings-2", {
      address: "10.0.2.2",
      labels: { app: "ratings", "security.istio.io/tlsMode": "istio" },
      network: "n2",
      ports: { http: 9080 },
    }),
  );
  const networks = new MeshNetworkIndex(
    {
      networks: {
        n1: { endpoints: [{ fromCidr: "10.0.2.1/32" }], gateways: [] },
        n2: { endpoints: [], gateways: [{ address: "192.0.2.9", port: 15443 }] },
      },
    },
    [],
    "c1",
  );
  const push = world.push({ networks });
  const on = (network: string) =>
    parseProxy({
      id: "sidecar~10.9.9.9~app.example~example.svc.cluster.local",
      metadata: { NAMESPACE: "example", INSTANCE_IPS: "10.9.9.9", NETWORK: network },
    });
  const addresses = (network: string) => {
    const { byName } = run(envoyEdsGenerator, on(network), push);
    return lbEndpoints(byName.get("outbound|8080||ratings.example.svc.cluster.local")!).map((e) => {
      const socket = ((e.endpoint as Obj).address as Obj).socket_address as Obj;
      return `${socket.address}:${socket.port_value}@${(e.load_balancing_weight as Obj).value}`;
    }).sort();
  };
  assert.deepEqual(addresses("n1"), ["10.0.2.1:9080@1", "192.0.2.9:15443@1"]);
  assert.deepEqual(addresses("n2"), ["10.0.2.2:9080@1"]);
  assert.notEqual(
    envoyEdsGenerator.shapeOf!(on("n1"), push, { names: [], full: true }),
    envoyEdsGenerator.shapeOf!(on("n2"), push, { names: [], full: true }),
  );
  const key = (network: string) =>
    run(envoyEdsGenerator, on(network), push).cacheable.get(
      "outbound|8080||ratings.example.svc.cluster.local",
    )!.key.id;
  assert.notEqual(key("n1"), key("n2"));
});

/** Ratings' workloads with canonical service labels: one on the proxy's network, one behind network n2's gateway. */
function telemetryWorld(): World {
  return new World().apply(
    ...envoyResources(),
    networking("WorkloadEntry", "example", "ratings-2", {
      address: "10.0.2.2",
      labels: {
        app: "ratings",
        "security.istio.io/tlsMode": "istio",
        "service.mesh.io/canonical-name": "ratings",
        "service.istio.io/canonical-revision": "v2",
      },
      serviceAccount: "ratings",
      ports: { http: 9080 },
    }),
    networking("WorkloadEntry", "example", "ratings-remote", {
      address: "10.7.0.1",
      network: "n2",
      labels: { app: "ratings", "security.istio.io/tlsMode": "istio" },
      ports: { http: 9080 },
    }),
  );
}

const RATINGS_CLUSTER = "outbound|8080||ratings.example.svc.cluster.local";
const TWO_NETWORKS = {
  networks: {
    n1: { endpoints: [{ fromRegistry: "c1" }], gateways: [{ address: "192.0.2.1", port: 15443 }] },
    n2: { endpoints: [], gateways: [{ address: "198.51.100.1", port: 15443 }] },
  },
};

/** `address` → the endpoint's filter metadata, as JSON. */
function metadataByAddress(assignment: Obj): Map<string, Record<string, unknown>> {
  return new Map(
    lbEndpoints(assignment).map((ep) => {
      const address = (((ep.endpoint as Obj).address as Obj).socket_address as Obj).address as string;
      const filters = ((ep.metadata as Obj | undefined)?.filter_metadata ?? {}) as Obj;
      return [
        address,
        Object.fromEntries(Object.entries(filters).map(([k, v]) => [k, structToJson(v as never)])),
      ];
    }),
  );
}

Deno.test("Without DISCOVERY_ENDPOINT_TELEMETRY_LABEL, endpoints carry no workload metadata", () => {
  const { byName } = run(envoyEdsGenerator, envoySidecar(), telemetryWorld().push());
  for (const filters of metadataByAddress(byName.get(RATINGS_CLUSTER)!).values()) {
    assert.equal(filters.istio, undefined);
  }
});

Deno.test("DISCOVERY_ENDPOINT_TELEMETRY_LABEL puts name;namespace;canonical service;revision on workload endpoints", () => {
  const world = telemetryWorld();
  const push = world.push({ endpointTelemetryLabel: true });
  const { byName, bytes, cacheable } = run(envoyEdsGenerator, envoySidecar(), push);
  const byAddress = metadataByAddress(byName.get(RATINGS_CLUSTER)!);
  assert.deepEqual(byAddress.get("10.0.2.2"), {
    istio: { workload: "ratings-2;example;ratings;v2" },
    "envoy.transport_socket_match": { tlsMode: "istio" },
  });
  assert.deepEqual(byAddress.get("10.0.2.1")!.istio, { workload: "ratings-1;example;;" });
  for (const [name, encoded] of bytes) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
  const plain = run(envoyEdsGenerator, envoySidecar(), world.push());
  assert.notEqual(cacheable.get(RATINGS_CLUSTER)!.key.id, plain.cacheable.get(RATINGS_CLUSTER)!.key.id);
});

Deno.test("With split horizon, the proxy's network keeps its workload metadata and another network's gateway has none", () => {
  const world = telemetryWorld();
  const push = world.push({
    endpointTelemetryLabel: true,
    networks: new MeshNetworkIndex(TWO_NETWORKS, world.registry.registries(), world.registry.clusterId),
  });
  const { byName, bytes } = run(envoyEdsGenerator, envoySidecar("example", "10.0.2.1"), push);
  const byAddress = metadataByAddress(byName.get(RATINGS_CLUSTER)!);
  assert.deepEqual([...byAddress.keys()].sort(), ["10.0.2.1", "10.0.2.2", "198.51.100.1"]);
  assert.deepEqual(byAddress.get("10.0.2.2")!.istio, { workload: "ratings-2;example;ratings;v2" });
  assert.deepEqual(byAddress.get("198.51.100.1"), { "envoy.transport_socket_match": { tlsMode: "istio" } });
  for (const [name, encoded] of bytes) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
});
