import assert from "node:assert/strict";
import { grpcEdsGenerator } from "./grpc_eds.ts";
import { GREETER, greeterResources, grpcProxy, networking, run, World } from "./_test_world.ts";

type Obj = Record<string, unknown>;
const DEFAULT = `outbound|7070||${GREETER}`;
const V1 = `outbound|7070|v1|${GREETER}`;
const V2 = `outbound|7070|v2|${GREETER}`;

function assignments(world: World, names: string[], full = true, configsUpdated?: string[]) {
  return run(grpcEdsGenerator, grpcProxy(), world.push(), {
    names,
    full,
    ...(configsUpdated ? { configsUpdated: new Set(configsUpdated) } : {}),
  });
}

function endpoint(address: string, port: number, weight = 1, health = "HEALTHY") {
  return {
    endpoint: { address: { socket_address: { address, port_value: port } } },
    health_status: health,
    load_balancing_weight: { value: weight },
  };
}

Deno.test("gRPC EDS groups a cluster's endpoints by locality, each locality weighted", async (t) => {
  const world = new World().apply(
    ...greeterResources(),
    networking("WorkloadEntry", "example", "greeter-v1b", {
      address: "10.0.0.3",
      labels: { app: "greeter", version: "v1" },
      locality: "region1/zone1",
      weight: 3,
      ports: { grpc: 17070 },
    }),
  );

  await t.step("the whole service: both zones, endpoint weights summed per locality", () => {
    const cla = assignments(world, [DEFAULT]).byName.get(DEFAULT)!;
    assert.equal(cla.cluster_name, DEFAULT);
    assert.deepEqual(cla.endpoints, [
      {
        locality: { region: "region1", zone: "zone1" },
        lb_endpoints: [endpoint("10.0.0.1", 17070), endpoint("10.0.0.3", 17070, 3)],
        load_balancing_weight: { value: 4 },
      },
      {
        locality: { region: "region1", zone: "zone2" },
        lb_endpoints: [endpoint("10.0.0.2", 27070)],
        load_balancing_weight: { value: 1 },
      },
    ]);
  });

  await t.step("a subset keeps only endpoints with its labels", () => {
    const out = assignments(world, [V1, V2]);
    const v1 = (out.byName.get(V1)!.endpoints as { lb_endpoints: Obj[] }[]).flatMap((l) => l.lb_endpoints);
    assert.deepEqual(
      v1.map((e) => ((e.endpoint as Obj).address as { socket_address: Obj }).socket_address.address),
      [
        "10.0.0.1",
        "10.0.0.3",
      ],
    );
    assert.equal((out.byName.get(V2)!.endpoints as Obj[]).length, 1);
  });

  await t.step("unknown clusters and subsets are not answered", () => {
    assert.deepEqual(
      assignments(world, [`outbound|7070|v9|${GREETER}`, "outbound|1||nope.example"]).names,
      [],
    );
  });
});

Deno.test("gRPC EDS sends IP endpoints only, each address once, with their health", () => {
  const world = new World().apply(
    networking("ServiceEntry", "example", "mixed", {
      hosts: ["mixed.example.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: 80, name: "grpc", protocol: "GRPC" }],
      endpoints: [
        { address: "10.1.0.1" },
        { address: "10.1.0.1" },
        { address: "unix:///var/run/sock" },
        { address: "2001:db8::1", ports: { grpc: 8080 } },
      ],
    }),
  );
  const name = "outbound|80||mixed.example.svc.cluster.local";
  const cla = assignments(world, [name]).byName.get(name)!;
  assert.deepEqual(cla.endpoints, [{
    locality: {},
    lb_endpoints: [endpoint("10.1.0.1", 80), endpoint("2001:db8::1", 8080)],
    load_balancing_weight: { value: 2 },
  }]);
});

Deno.test("gRPC EDS rebuilds only the services an endpoint-only push names", () => {
  const world = new World().apply(
    ...greeterResources(),
    networking("ServiceEntry", "example", "other", {
      hosts: ["other.example.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: 80, name: "grpc", protocol: "GRPC" }],
      endpoints: [{ address: "10.2.0.1" }],
    }),
  );
  const names = [DEFAULT, "outbound|80||other.example.svc.cluster.local"];
  assert.deepEqual(assignments(world, names).names, names);
  assert.deepEqual(
    assignments(world, names, false, ["ServiceEntry/example/other.example.svc.cluster.local"]).names,
    ["outbound|80||other.example.svc.cluster.local"],
  );
  assert.deepEqual(assignments(world, names, false).names, names);
});

Deno.test("gRPC EDS lists no cluster of a DNS-resolved service, asked for by name or by wildcard", () => {
  const world = new World().apply(
    ...greeterResources(),
    networking("ServiceEntry", "example", "dns", {
      hosts: ["dns.example.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "DNS",
      ports: [{ number: 80, name: "grpc", protocol: "GRPC" }],
      endpoints: [{ address: "backend.example.com" }],
    }),
  );
  const dns = "outbound|80||dns.example.svc.cluster.local";
  assert.deepEqual(assignments(world, [dns, DEFAULT]).names, [DEFAULT]);
  assert.ok(!assignments(world, []).names.includes(dns));
  assert.ok(assignments(world, []).names.includes(DEFAULT));
});

Deno.test("gRPC EDS cache keys change exactly when the endpoints or subset change", () => {
  const world = new World().apply(...greeterResources());
  const key = () => assignments(world, [V1]).cacheable.get(V1)!.key;
  const first = key();
  assert.deepEqual([...first.dependsOn].sort(), [
    "DestinationRule/example/greeter",
    "ServiceEntry/example/greeter.example.svc.cluster.local",
  ]);
  assert.equal(key().id, first.id);
  world.apply(networking("WorkloadEntry", "example", "greeter-v1", {
    address: "10.0.0.9",
    labels: { app: "greeter", version: "v1" },
    ports: { grpc: 17070 },
  }));
  const moved = key();
  assert.notEqual(moved.id, first.id);
  world.apply(networking("DestinationRule", "example", "greeter", {
    host: "greeter",
    subsets: [{ name: "v1", labels: { app: "greeter" } }],
  }));
  assert.notEqual(key().id, moved.id);
});

Deno.test("gRPC EDS splits by network as Envoy's: another network's endpoints become its gateway, and the client's network is in its shape and key", async () => {
  const { MeshNetworkIndex } = await import("../push/network_index.ts");
  const { parseProxy } = await import("../model/proxy.ts");
  const world = new World().apply(
    networking("ServiceEntry", "example", "ratings", {
      hosts: ["ratings.example.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: 8080, name: "grpc", protocol: "GRPC" }],
      endpoints: [
        { address: "10.0.2.1", labels: { "security.istio.io/tlsMode": "istio" } },
        { address: "10.0.2.2", network: "n2", labels: { "security.istio.io/tlsMode": "istio" } },
        { address: "10.0.2.3", network: "n2", labels: { "security.istio.io/tlsMode": "istio" } },
      ],
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
  const name = "outbound|8080||ratings.example.svc.cluster.local";
  const on = (network: string) =>
    parseProxy({
      id: "sidecar~10.9.9.9~client.example~example.svc.cluster.local",
      metadata: { GENERATOR: "grpc", NAMESPACE: "example", NETWORK: network },
    });
  const addresses = (network: string) => {
    const cla = run(grpcEdsGenerator, on(network), push, { names: [name], full: true }).byName.get(name)!;
    return (cla.endpoints as Obj[]).flatMap((l) => l.lb_endpoints as Obj[]).map((e) => {
      const socket = ((e.endpoint as Obj).address as Obj).socket_address as Obj;
      return `${socket.address}:${socket.port_value}@${(e.load_balancing_weight as Obj).value}`;
    }).sort();
  };
  assert.deepEqual(addresses("n1"), ["10.0.2.1:8080@1", "192.0.2.9:15443@2"]);
  assert.deepEqual(addresses("n2"), ["10.0.2.2:8080@1", "10.0.2.3:8080@1"]);
  const request = { names: [name], full: true };
  assert.notEqual(
    grpcEdsGenerator.shapeOf!(on("n1"), push, request),
    grpcEdsGenerator.shapeOf!(on("n2"), push, request),
  );
  const key = (network: string) =>
    run(grpcEdsGenerator, on(network), push, request).cacheable.get(name)!.key.id;
  assert.notEqual(key("n1"), key("n2"));
});
