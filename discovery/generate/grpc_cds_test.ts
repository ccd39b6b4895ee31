import assert from "node:assert/strict";
import { grpcCdsGenerator } from "./grpc_cds.ts";
import { LB_POLICY_TYPE_URL } from "./cluster_lb.ts";
import { GREETER, greeterResources, grpcProxy, networking, run, World } from "./_test_world.ts";

type Obj = Record<string, unknown>;
const DEFAULT = `outbound|7070||${GREETER}`;
const V1 = `outbound|7070|v1|${GREETER}`;
const V2 = `outbound|7070|v2|${GREETER}`;

function rule(spec: Record<string, unknown>) {
  return networking("DestinationRule", "example", "greeter", { host: "greeter", ...spec });
}

function clusters(world: World, names: string[] = []): Map<string, Obj> {
  return run(grpcCdsGenerator, grpcProxy(), world.push(), { names }).byName;
}

Deno.test("gRPC CDS makes an EDS cluster per service port and per DestinationRule subset", async (t) => {
  const world = new World().apply(...greeterResources());

  await t.step("a wildcard request lists the service's cluster and its subsets", () => {
    assert.deepEqual([...clusters(world).keys()], [DEFAULT, V1, V2]);
  });

  await t.step("each is an EDS cluster fed over ADS under its own name, round robin by default", () => {
    const cluster = clusters(world, [V1]).get(V1)!;
    assert.equal(cluster.type, "EDS");
    assert.deepEqual(cluster.eds_cluster_config, {
      eds_config: { ads: {}, resource_api_version: "V3" },
      service_name: V1,
    });
    assert.equal(cluster.lb_policy, undefined);
    assert.deepEqual(cluster.connect_timeout, { seconds: "10" });
    assert.deepEqual((cluster.circuit_breakers as { thresholds: Obj[] }).thresholds[0].max_requests, {
      value: 4294967295,
    });
  });

  await t.step(
    "names the client did not ask for, subsets no rule defines and other directions are left out",
    () => {
      const names = [
        V2,
        `outbound|7070|v3|${GREETER}`,
        `inbound|7070||${GREETER}`,
        `outbound|7071||${GREETER}`,
        "x",
      ];
      assert.deepEqual([...clusters(world, names).keys()], [V2]);
    },
  );

  await t.step("without a DestinationRule there are no subset clusters", () => {
    world.delete("DestinationRule", "example", "greeter");
    assert.deepEqual([...clusters(world).keys()], [DEFAULT]);
    assert.deepEqual([...clusters(world, [V1]).keys()], []);
  });
});

Deno.test("gRPC CDS takes load balancing and limits from the merged DestinationRule policy", async (t) => {
  const world = new World().apply(
    ...greeterResources(),
    rule({
      trafficPolicy: {
        loadBalancer: { simple: "LEAST_CONN" },
        connectionPool: {
          tcp: { connectTimeout: "250ms", maxConnections: 10 },
          http: { http2MaxRequests: 50 },
        },
        outlierDetection: {
          consecutive5xxErrors: 3,
          interval: "5s",
          baseEjectionTime: "30s",
          maxEjectionPercent: 50,
        },
        portLevelSettings: [{ port: { number: 9999 }, loadBalancer: { simple: "RANDOM" } }],
      },
      subsets: [
        {
          name: "v1",
          labels: { version: "v1" },
          trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: "x" } } },
        },
        {
          name: "v2",
          labels: { version: "v2" },
          trafficPolicy: {
            portLevelSettings: [{ port: { number: 7070 }, loadBalancer: { simple: "RANDOM" } }],
          },
        },
      ],
    }),
  );
  const all = clusters(world);

  await t.step("LEAST_CONN is LEAST_REQUEST with a policy list that falls back to round robin", () => {
    const cluster = all.get(DEFAULT)!;
    assert.equal(cluster.lb_policy, "LEAST_REQUEST");
    const wrr =
      ((cluster.load_balancing_policy as { policies: Obj[] }).policies[0].typed_extension_config as Obj)
        .typed_config as {
          "@type": string;
          endpoint_picking_policy: { policies: { typed_extension_config: Obj }[] };
        };
    assert.equal(wrr["@type"], LB_POLICY_TYPE_URL.wrrLocality);
    assert.deepEqual(
      wrr.endpoint_picking_policy.policies.map((p) =>
        (p.typed_extension_config.typed_config as Obj)["@type"]
      ),
      [LB_POLICY_TYPE_URL.leastRequest, LB_POLICY_TYPE_URL.roundRobin],
    );
  });

  await t.step("connection pool settings become the connect timeout and circuit breaker thresholds", () => {
    const cluster = all.get(DEFAULT)!;
    assert.deepEqual(cluster.connect_timeout, { nanos: 250_000_000 });
    assert.deepEqual((cluster.circuit_breakers as { thresholds: Obj[] }).thresholds[0], {
      max_connections: { value: 10 },
      max_pending_requests: { value: 4294967295 },
      max_requests: { value: 50 },
      max_retries: { value: 4294967295 },
    });
  });

  await t.step("outlier detection is converted as Istio does, with success-rate ejection off", () => {
    assert.deepEqual(all.get(DEFAULT)!.outlier_detection, {
      consecutive_5xx: { value: 3 },
      interval: { seconds: "5" },
      base_ejection_time: { seconds: "30" },
      max_ejection_percent: { value: 50 },
      enforcing_consecutive_5xx: { value: 100 },
      enforcing_success_rate: { value: 0 },
    });
    assert.deepEqual(all.get(DEFAULT)!.common_lb_config, { healthy_panic_threshold: { value: 0 } });
  });

  await t.step("a subset's consistent hash is a ring hash with xxHash and Istio's default ring size", () => {
    const cluster = all.get(V1)!;
    assert.equal(cluster.lb_policy, "RING_HASH");
    assert.deepEqual(cluster.ring_hash_lb_config, {
      minimum_ring_size: { value: "1024" },
      hash_function: "XX_HASH",
    });
    assert.deepEqual((cluster.circuit_breakers as { thresholds: Obj[] }).thresholds[0].max_requests, {
      value: 50,
    });
  });

  await t.step("a subset's port-level settings replace the whole policy for that port", () => {
    const cluster = all.get(V2)!;
    assert.equal(cluster.lb_policy, "RANDOM");
    assert.deepEqual(cluster.connect_timeout, { seconds: "10" });
    assert.equal(cluster.outlier_detection, undefined);
  });
});

Deno.test("gRPC CDS gives DNS services a LOGICAL_DNS cluster and leaves passthrough services out", () => {
  const world = new World().apply(
    networking("ServiceEntry", "example", "external", {
      hosts: ["api.example.com"],
      resolution: "DNS",
      ports: [{ number: 443, name: "grpc", protocol: "GRPC" }],
    }),
    networking("ServiceEntry", "example", "passthrough", {
      hosts: ["passthrough.example.com"],
      resolution: "NONE",
      ports: [{ number: 443, name: "tls", protocol: "TLS" }],
    }),
  );
  const all = clusters(world);
  assert.deepEqual([...all.keys()], ["outbound|443||api.example.com"]);
  const cluster = all.get("outbound|443||api.example.com")!;
  assert.equal(cluster.type, "LOGICAL_DNS");
  assert.deepEqual(cluster.load_assignment, {
    cluster_name: "outbound|443||api.example.com",
    endpoints: [{
      lb_endpoints: [{
        endpoint: { address: { socket_address: { address: "api.example.com", port_value: 443 } } },
      }],
    }],
  });
});

Deno.test("gRPC CDS cache keys change with the rule and stay with everything else", () => {
  const world = new World().apply(...greeterResources());
  const key = () => run(grpcCdsGenerator, grpcProxy(), world.push(), { names: [V1] }).cacheable.get(V1)!.key;
  const first = key();
  assert.deepEqual([...first.dependsOn].sort(), [
    "DestinationRule/example/greeter",
    "ServiceEntry/example/greeter.example.svc.cluster.local",
  ]);
  world.apply(networking("VirtualService", "example", "unrelated", { hosts: ["unrelated"], http: [] }));
  assert.equal(key().id, first.id);
  world.apply(rule({
    trafficPolicy: { loadBalancer: { simple: "RANDOM" } },
    subsets: [{ name: "v1", labels: { version: "v1" } }],
  }));
  assert.notEqual(key().id, first.id);
});
