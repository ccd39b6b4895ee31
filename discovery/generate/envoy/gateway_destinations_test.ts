import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { GREETER, networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar, ingressGateway } from "./_test_envoy.ts";
import { BLACK_HOLE_CLUSTER, envoyCdsGenerator, PASSTHROUGH_CLUSTER } from "./envoy_cds.ts";

const RATINGS = "ratings.example.svc.cluster.local";

/** A Gateway selecting `app: ingress`, routing to ratings, mirroring to greeter, and TCP to the DNS database. */
function world(): World {
  return new World().apply(
    ...envoyResources(),
    networking("Gateway", "example", "shop", {
      selector: { app: "ingress" },
      servers: [
        { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["shop.example.com"] },
        { port: { number: 5432, name: "tcp", protocol: "TCP" }, hosts: ["*"] },
      ],
    }),
    networking("VirtualService", "example", "shop", {
      hosts: ["shop.example.com"],
      gateways: ["shop"],
      http: [{
        route: [{ destination: { host: "ratings", port: { number: 8080 } } }],
        mirror: { host: GREETER },
      }],
    }),
    networking("VirtualService", "example", "db", {
      hosts: ["*"],
      gateways: ["shop"],
      tcp: [{ route: [{ destination: { host: "db.example.com", port: { number: 5432 } } }] }],
    }),
    // Bound to the mesh only: its destination is not the gateway's.
    networking("VirtualService", "example", "mesh-only", {
      hosts: ["api.example.com"],
      http: [{ route: [{ destination: { host: "api.example.com" } }] }],
    }),
  );
}

const hostsOf = (names: readonly string[]) =>
  [...new Set(names.map((name) => name.startsWith("outbound|") ? name.split("|")[3] : name))].sort();

Deno.test("Under DISCOVERY_FILTER_GATEWAY_CLUSTER_CONFIG a gateway gets only the clusters its VirtualServices reach", () => {
  const w = world();
  const off = run(envoyCdsGenerator, ingressGateway(), w.push());
  const on = run(envoyCdsGenerator, ingressGateway(), w.push({ filterGatewayClusters: true }));
  assert.ok(hostsOf(off.names).includes("api.example.com"), "off: every cluster, as before");
  assert.deepEqual(
    hostsOf(on.names),
    [
      BLACK_HOLE_CLUSTER,
      PASSTHROUGH_CLUSTER,
      GREETER,
      "db.example.com",
      RATINGS,
    ].sort(),
  );
  // Route and mirror destinations keep every port and subset cluster of their service, as they are.
  assert.deepEqual(on.names, off.names.filter((name) => on.byName.has(name)));
  assert.ok(on.names.includes(`outbound|7070|v1|${GREETER}`));
  for (const name of on.names) {
    assert.deepEqual(on.byName.get(name), off.byName.get(name), name);
    const violations = validatePgvAny(on.bytes.get(name)!);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
});

Deno.test("Under DISCOVERY_FILTER_GATEWAY_CLUSTER_CONFIG a gateway no Gateway selects gets only the catch-alls", () => {
  const unselected = {
    ...ingressGateway(),
    metadata: { ...ingressGateway().metadata, labels: { app: "other" } },
  };
  const on = run(envoyCdsGenerator, unselected, world().push({ filterGatewayClusters: true }));
  assert.deepEqual(on.names, [BLACK_HOLE_CLUSTER, PASSTHROUGH_CLUSTER]);
});

Deno.test("DISCOVERY_FILTER_GATEWAY_CLUSTER_CONFIG leaves sidecars' clusters alone", () => {
  const w = world();
  const sidecar = envoySidecar();
  assert.deepEqual(
    run(envoyCdsGenerator, sidecar, w.push({ filterGatewayClusters: true })).names,
    run(envoyCdsGenerator, sidecar, w.push()).names,
  );
});
