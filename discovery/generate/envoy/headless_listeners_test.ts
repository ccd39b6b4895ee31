import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { EndpointSnapshot } from "../../push/endpoint_snapshot.ts";
import { MemoryRegistry } from "../../registry/memory_registry.ts";
import { endpoint, service } from "../../registry/_test_support.ts";
import type { PushContextInputs } from "../../push/push_context.ts";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";

type Obj = Record<string, unknown>;
const DB = "db.example.svc.cluster.local";
const DB_CLUSTER = `outbound|27017||${DB}`;

/**
 * A headless orchestrator Service `db` (a StatefulSet: TCP 27017, HTTP 8081) with pods at 10.0.5.1, 10.0.5.2
 * and the proxy's own 10.0.2.1, and an empty headless Service `cache` on TCP 6380.
 */
function world(): World {
  const w = new World().apply(...envoyResources());
  const orchestrator = new MemoryRegistry({ provider: "Orchestrator", clusterId: "c1" });
  w.registry.addRegistry(orchestrator);
  const headless = (hostname: string, ports: { name: string; port: number; protocol: "TCP" | "HTTP" }[]) =>
    service(hostname, "example", {
      ports,
      resolution: "Passthrough",
      attributes: {
        serviceRegistry: "Orchestrator",
        clusterId: "c1",
        name: hostname.split(".")[0],
        namespace: "example",
      },
    });
  orchestrator.addService(headless(DB, [
    { name: "mongo", port: 27017, protocol: "TCP" },
    { name: "http", port: 8081, protocol: "HTTP" },
  ]));
  orchestrator.setEndpoints(
    DB,
    "example",
    ["10.0.5.2", "10.0.5.1", "10.0.2.1"].flatMap((ip) => [
      endpoint(ip, { servicePortName: "mongo", endpointPort: 27017 }),
      endpoint(ip, { servicePortName: "http", endpointPort: 8081 }),
    ]),
  );
  orchestrator.addService(
    headless("cache.example.svc.cluster.local", [{ name: "redis", port: 6380, protocol: "TCP" }]),
  );
  return w;
}

function listeners(inputs: Partial<PushContextInputs>) {
  const lds = run(envoyLdsGenerator, envoySidecar("example", "10.0.2.1"), world().push(inputs));
  for (const [name, encoded] of lds.bytes) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
  return lds;
}

const ports = (names: readonly string[], port: number) => names.filter((n) => n.endsWith(`_${port}`));

Deno.test("A headless orchestrator service's TCP port gets an outbound listener per pod IP but the proxy's own", () => {
  const { names, byName } = listeners({});
  assert.deepEqual(ports(names, 27017), ["10.0.5.1_27017", "10.0.5.2_27017"]);
  const pod = byName.get("10.0.5.1_27017")!;
  assert.deepEqual((pod.address as Obj).socket_address, { address: "10.0.5.1", port_value: 27017 });
  assert.ok(JSON.stringify(pod.filter_chains).includes(`"cluster":"${DB_CLUSTER}"`));
  assert.ok(names.includes("0.0.0.0_8081"), "its HTTP port stays on the wildcard listener");
  assert.deepEqual(ports(names, 6380), [], "a headless service without pods gets no listener");
});

Deno.test("With DISCOVERY_ENABLE_HEADLESS_SERVICE_POD_LISTENERS=false, a headless TCP port takes the wildcard listener", () => {
  const { names, byName } = listeners({ headlessPodListeners: false });
  assert.deepEqual(ports(names, 27017), ["0.0.0.0_27017"]);
  assert.ok(JSON.stringify(byName.get("0.0.0.0_27017")!.filter_chains).includes(`"cluster":"${DB_CLUSTER}"`));
  assert.deepEqual(ports(names, 6380), ["0.0.0.0_6380"]);
});

Deno.test("A ServiceEntry with resolution NONE and no endpoints keeps its wildcard listener; with endpoints, one per IP", () => {
  const w = world().apply(
    networking("ServiceEntry", "example", "legacy", {
      hosts: ["legacy.example.com"],
      resolution: "NONE",
      ports: [{ number: 7001, name: "tcp", protocol: "TCP" }],
    }),
    networking("ServiceEntry", "example", "vms", {
      hosts: ["vms.example.com"],
      resolution: "NONE",
      ports: [{ number: 7002, name: "tcp", protocol: "TCP" }],
      endpoints: [{ address: "10.0.6.1" }, { address: "vm.example.net" }],
    }),
  );
  const { names } = run(envoyLdsGenerator, envoySidecar("example", "10.0.2.1"), w.push());
  assert.deepEqual(ports(names, 7001), ["0.0.0.0_7001"]);
  assert.deepEqual(ports(names, 7002), ["10.0.6.1_7002"], "hostnames cannot be listened on");
});

Deno.test("Two pods of one headless service never share an LDS shape: each one's listeners leave its own address out", () => {
  const push = world().push({});
  const shapes = ["10.0.5.1", "10.0.5.2"].map((ip) =>
    envoyLdsGenerator.shapeOf!(envoySidecar("example", ip), push, { names: [], full: true })
  );
  assert.notEqual(shapes[0], shapes[1]);
  const other = run(envoyLdsGenerator, envoySidecar("example", "10.0.5.1"), push).names;
  assert.ok(other.includes("10.0.5.2_27017") && !other.includes("10.0.5.1_27017"));
});

Deno.test("A sidecar's LDS shape looks up the endpoints at its addresses once, for its inbound ports and its own address", () => {
  const push = world().push({});
  const lookups: (readonly string[])[] = [];
  class RecordingSnapshot extends EndpointSnapshot {
    override instancesAt(addresses: readonly string[]) {
      lookups.push(addresses);
      return super.instancesAt(addresses);
    }
  }
  const recorded = push.withEndpoints(
    new RecordingSnapshot(push.endpointIndex.namespaces(), push.endpointIndex.generation),
  );
  const shape = envoyLdsGenerator.shapeOf!(envoySidecar("example", "10.0.2.1"), recorded, {
    names: [],
    full: true,
  });
  assert.deepEqual(lookups, [["10.0.2.1"]]);
  assert.equal(
    shape,
    envoyLdsGenerator.shapeOf!(envoySidecar("example", "10.0.2.1"), push, { names: [], full: true }),
  );
});
