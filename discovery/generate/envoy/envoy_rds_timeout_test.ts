import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar, ingressGateway } from "./_test_envoy.ts";
import { envoyRdsGenerator } from "./envoy_rds.ts";

type Obj = Record<string, unknown>;
const RATINGS = "ratings.example.svc.cluster.local";
const FIVE_SECONDS = 5_000_000_000n;

/** `ratings` with a VirtualService whose first route sets a timeout and second sets none; a gateway on port 80. */
function world(): World {
  return new World().apply(
    ...envoyResources(),
    networking("ServiceEntry", "other", "reviews", {
      hosts: ["reviews.other.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      addresses: ["10.96.0.9"],
      ports: [{ number: 8080, name: "http", protocol: "HTTP" }],
      endpoints: [{ address: "10.0.3.1" }],
    }),
    networking("Gateway", "example", "shop", {
      selector: { app: "ingress" },
      servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["shop.example.com"] }],
    }),
    networking("VirtualService", "example", "ratings", {
      hosts: ["ratings", "shop.example.com"],
      gateways: ["mesh", "shop"],
      http: [{
        match: [{ uri: { prefix: "/v2" } }],
        route: [{ destination: { host: "ratings", port: { number: 8080 } } }],
        timeout: "3s",
      }, { route: [{ destination: { host: "ratings", port: { number: 8080 } } }] }],
    }),
  );
}

const routesOf = (config: Obj, host: string) =>
  ((config.virtual_hosts as Obj[]).find((h) => h.name === host)!.routes as Obj[]).map((r) => r.route as Obj);

function assertValid(bytes: Map<string, Uint8Array>): void {
  for (const [name, encoded] of bytes) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
}

Deno.test("Without MESH_DEFAULT_REQUEST_TIMEOUT, a VirtualService route that sets no timeout has none", () => {
  const rds = run(envoyRdsGenerator, envoySidecar(), world().push());
  const [v2, rest] = routesOf(rds.byName.get("8080")!, `${RATINGS}:8080`);
  assert.deepEqual(v2.timeout, { seconds: "3" });
  assert.deepEqual(rest.timeout, {});
  assert.equal(rest.max_stream_duration, undefined);
});

Deno.test("MESH_DEFAULT_REQUEST_TIMEOUT times VirtualService routes that set none, on sidecars and gateways", () => {
  const push = world().push({ defaultRequestTimeoutNs: FIVE_SECONDS });
  const rds = run(envoyRdsGenerator, envoySidecar(), push);
  const config = rds.byName.get("8080")!;
  const [v2, rest] = routesOf(config, `${RATINGS}:8080`);
  assert.deepEqual(v2.timeout, { seconds: "3" }, "the VirtualService's own timeout wins");
  assert.deepEqual(rest.timeout, { seconds: "5" });
  assert.deepEqual(rest.max_stream_duration, {
    max_stream_duration: { seconds: "5" },
    grpc_timeout_header_max: { seconds: "5" },
  });
  const [plain] = routesOf(config, "reviews.other.svc.cluster.local:8080");
  assert.deepEqual(
    plain.timeout,
    {},
    "a service without a VirtualService keeps the default route's no timeout",
  );
  const [passthrough] = routesOf(config, "allow_any");
  assert.deepEqual(passthrough.timeout, { seconds: "0" });
  assertValid(rds.bytes);

  const gateway = run(envoyRdsGenerator, ingressGateway(), push, { names: ["http.80"] });
  const [gv2, grest] = routesOf(gateway.byName.get("http.80")!, "shop.example.com:80");
  assert.deepEqual(gv2.timeout, { seconds: "3" });
  assert.deepEqual(grest.timeout, { seconds: "5" });
  assertValid(gateway.bytes);
});
