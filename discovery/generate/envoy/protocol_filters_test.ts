import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { NO_PROTOCOL_FILTERS, type ProtocolFilterOptions } from "../../push/push_context.ts";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";

type Obj = Record<string, unknown>;
const DATA = "data.example.svc.cluster.local";
const ALL_ON: ProtocolFilterOptions = { redis: true, mysql: true, thrift: true };

/** A service with a Redis, a MySQL and a Thrift port, and this proxy's own workload behind it. */
function world(): World {
  return new World().apply(
    ...envoyResources(),
    networking("ServiceEntry", "example", "data", {
      hosts: [DATA],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      addresses: ["10.96.0.30"],
      ports: [
        { number: 6379, name: "redis", protocol: "REDIS" },
        { number: 3306, name: "mysql", protocol: "MYSQL" },
        { number: 9090, name: "thrift", protocol: "THRIFT" },
      ],
      workloadSelector: { labels: { app: "data" } },
    }),
    networking("WorkloadEntry", "example", "data-1", { address: "10.0.8.1", labels: { app: "data" } }),
  );
}

const filterNames = (chain: Obj) => (chain.filters as Obj[]).map((f) => f.name);
const lastChain = (listener: Obj) => (listener.filter_chains as Obj[]).at(-1)!;

function assertValid(bytes: Map<string, Uint8Array>): void {
  for (const [name, encoded] of bytes) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
}

Deno.test("With the protocol filters off, Redis, MySQL and Thrift ports are plain TCP proxies", () => {
  const push = world().push({ protocolFilters: NO_PROTOCOL_FILTERS });
  const lds = run(envoyLdsGenerator, envoySidecar("example", "10.0.2.1"), push);
  for (const port of [6379, 3306, 9090]) {
    assert.deepEqual(filterNames(lastChain(lds.byName.get(`10.96.0.30_${port}`)!)), [
      "envoy.filters.network.tcp_proxy",
    ]);
  }
  const cds = run(envoyCdsGenerator, envoySidecar("example", "10.0.2.1"), push);
  assert.notEqual(cds.byName.get(`outbound|6379||${DATA}`)!.lb_policy, "MAGLEV");
});

Deno.test("Outbound, each switch puts its protocol's filter on the port's listener, valid by Envoy's schema", () => {
  const push = world().push({ protocolFilters: ALL_ON });
  const proxy = envoySidecar("example", "10.0.2.1");
  const lds = run(envoyLdsGenerator, proxy, push);
  const redis = lastChain(lds.byName.get("10.96.0.30_6379")!).filters as Obj[];
  assert.deepEqual(
    redis.map((f) => f.name),
    ["envoy.filters.network.redis_proxy"],
    "redis_proxy ends the chain",
  );
  const redisConfig = redis[0].typed_config as Obj;
  assert.deepEqual(redisConfig.prefix_routes, { catch_all_route: { cluster: `outbound|6379||${DATA}` } });
  assert.deepEqual(redisConfig.settings, { op_timeout: { seconds: "5" } });
  assert.deepEqual(filterNames(lastChain(lds.byName.get("10.96.0.30_3306")!)), [
    "envoy.filters.network.mysql_proxy",
    "envoy.filters.network.tcp_proxy",
  ]);
  const thrift = lastChain(lds.byName.get("10.96.0.30_9090")!).filters as Obj[];
  assert.deepEqual(thrift.map((f) => f.name), ["envoy.filters.network.thrift_proxy"]);
  assert.deepEqual(((thrift[0].typed_config as Obj).route_config as Obj).routes, [
    { match: { method_name: "" }, route: { cluster: `outbound|9090||${DATA}` } },
  ]);
  assertValid(lds.bytes);
});

Deno.test("A Redis port's cluster balances with Maglev under the Redis filter, whatever the DestinationRule says", () => {
  const w = world().apply(networking("DestinationRule", "example", "data", {
    host: DATA,
    trafficPolicy: { loadBalancer: { simple: "LEAST_CONN" } },
  }));
  const cds = run(
    envoyCdsGenerator,
    envoySidecar("example", "10.0.2.1"),
    w.push({ protocolFilters: ALL_ON }),
  );
  assert.equal(cds.byName.get(`outbound|6379||${DATA}`)!.lb_policy, "MAGLEV");
  assert.equal(cds.byName.get(`outbound|3306||${DATA}`)!.lb_policy, "LEAST_REQUEST");
  assertValid(cds.bytes);
});

Deno.test("Inbound, the workload's own Redis, MySQL and Thrift ports get the same filters to their inbound clusters", () => {
  const lds = run(
    envoyLdsGenerator,
    envoySidecar("example", "10.0.8.1"),
    world().push({ protocolFilters: ALL_ON }),
  );
  const chains = lds.byName.get("virtualInbound")!.filter_chains as Obj[];
  const chainOf = (port: number) => chains.find((c) => c.name === `inbound|${port}|plaintext`)!;
  assert.deepEqual(filterNames(chainOf(6379)), ["envoy.filters.network.redis_proxy"]);
  assert.deepEqual(filterNames(chainOf(3306)), [
    "envoy.filters.network.mysql_proxy",
    "envoy.filters.network.tcp_proxy",
  ]);
  assert.deepEqual(filterNames(chainOf(9090)), ["envoy.filters.network.thrift_proxy"]);
  assertValid(lds.bytes);
});
