import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { DEFAULT_PROTOCOL_SNIFFING } from "../../push/push_context.ts";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import { envoyRdsGenerator } from "./envoy_rds.ts";

type Obj = Record<string, unknown>;
const CACHE = "cache.example.svc.cluster.local";

/** A service whose port declares no protocol, and this proxy's own workload behind it. */
function world(): World {
  return new World().apply(
    ...envoyResources(),
    networking("ServiceEntry", "example", "cache", {
      hosts: [CACHE],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      addresses: ["10.96.0.20"],
      ports: [{ number: 7777, name: "data" }],
      workloadSelector: { labels: { app: "cache" } },
    }),
    networking("WorkloadEntry", "example", "cache-1", { address: "10.0.7.1", labels: { app: "cache" } }),
  );
}

const names = (chains: Obj[]) => chains.map((c) => String(c.name ?? (c.filters as Obj[])[0].name));

Deno.test("Outbound: a port of undeclared protocol sends detected HTTP through its routes and the rest as TCP", () => {
  const push = world().push();
  const proxy = envoySidecar("example", "10.0.2.1");
  const lds = run(envoyLdsGenerator, proxy, push);
  const listener = lds.byName.get("10.96.0.20_7777")!;
  assert.deepEqual((listener.listener_filters as Obj[]).map((f) => f.name), [
    "envoy.filters.listener.http_inspector",
  ]);
  assert.equal(listener.continue_on_listener_filters_timeout, true);
  assert.deepEqual(listener.listener_filters_timeout, { nanos: 100_000_000 }, "the mesh's 100 ms");
  const [http, tcp] = listener.filter_chains as Obj[];
  assert.deepEqual((http.filter_chain_match as Obj).application_protocols, ["http/1.0", "http/1.1", "h2c"]);
  assert.match(JSON.stringify(http.filters), /"route_config_name":"7777"/);
  assert.equal(((tcp.filters as Obj[])[0].typed_config as Obj).cluster, `outbound|7777||${CACHE}`);
  const rds = run(envoyRdsGenerator, proxy, push);
  const hosts = rds.byName.get("7777")!.virtual_hosts as Obj[];
  assert.ok(hosts.some((h) => h.name === `${CACHE}:7777`), "the sniffed port's route configuration exists");
  for (const [name, encoded] of [...lds.bytes, ...rds.bytes]) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
});

Deno.test("Inbound: a port of undeclared protocol gets HTTP and TCP chains, by inspector and by mesh ALPN", () => {
  const push = world().push();
  const lds = run(envoyLdsGenerator, envoySidecar("example", "10.0.7.1"), push);
  const inbound = lds.byName.get("virtualInbound")!;
  assert.ok(
    (inbound.listener_filters as Obj[]).some((f) => f.name === "envoy.filters.listener.http_inspector"),
  );
  assert.deepEqual(
    inbound.listener_filters_timeout,
    { seconds: "1" },
    "DISCOVERY_INBOUND_PROTOCOL_DETECTION_TIMEOUT",
  );
  const chains = (inbound.filter_chains as Obj[]).filter((c) => String(c.name).startsWith("inbound|7777|"));
  assert.deepEqual(names(chains), [
    "inbound|7777|mtls|http",
    "inbound|7777|plaintext|http",
    "inbound|7777|mtls|tcp",
    "inbound|7777|plaintext|tcp",
  ]);
  assert.deepEqual((chains[0].filter_chain_match as Obj).application_protocols, [
    "istio-http/1.0",
    "istio-http/1.1",
    "istio-h2",
  ]);
  assert.match(JSON.stringify(chains[1].filters), /http_connection_manager/);
  assert.match(JSON.stringify(chains[3].filters), /tcp_proxy/);
  const violations = validatePgvAny(lds.bytes.get("virtualInbound")!);
  assert.equal(violations.length, 0, formatPgvViolations(violations));
});

Deno.test("With sniffing off, a port of undeclared protocol is plain TCP both ways", () => {
  const push = world().push({
    protocolSniffing: { ...DEFAULT_PROTOCOL_SNIFFING, outbound: false, inbound: false },
  });
  const outbound = run(envoyLdsGenerator, envoySidecar("example", "10.0.2.1"), push).byName.get(
    "10.96.0.20_7777",
  )!;
  assert.equal(outbound.listener_filters, undefined);
  assert.equal((outbound.filter_chains as Obj[]).length, 1);
  const inbound = run(envoyLdsGenerator, envoySidecar("example", "10.0.7.1"), push).byName.get(
    "virtualInbound",
  )!;
  assert.ok(!JSON.stringify(inbound).includes("http_inspector"));
  assert.ok(!run(envoyRdsGenerator, envoySidecar("example", "10.0.2.1"), push).names.includes("7777"));
});
