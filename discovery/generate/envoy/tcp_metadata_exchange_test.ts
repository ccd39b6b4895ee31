import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { DEFAULT_LISTENER_PLUGINS } from "../../push/push_context.ts";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";

type Obj = Record<string, unknown>;
const RATINGS_CLUSTER = "outbound|8080||ratings.example.svc.cluster.local";
const GREETER_CLUSTER = "outbound|7070||greeter.example.svc.cluster.local";

/** The Envoy resources of the ratings sidecar, which also serves a TCP port, with the metadata exchange plugin. */
function generate(tcpMetadataExchange: boolean) {
  const push = new World().apply(
    ...envoyResources(),
    networking("ServiceEntry", "example", "ratings-tcp", {
      hosts: ["ratings-tcp.example.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      addresses: ["10.96.0.41"],
      ports: [{ number: 7000, name: "tcp", protocol: "TCP" }],
      workloadSelector: { labels: { app: "ratings" } },
    }),
  ).push({ plugins: { ...DEFAULT_LISTENER_PLUGINS, metadataExchange: true }, tcpMetadataExchange });
  const proxy = envoySidecar("example", "10.0.2.1", { app: "ratings" });
  const lds = run(envoyLdsGenerator, proxy, push);
  const cds = run(envoyCdsGenerator, proxy, push);
  for (const [name, encoded] of [...lds.bytes, ...cds.bytes]) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
  return { lds: lds.byName, cds: cds.byName };
}

const inboundChain = (lds: Map<string, Obj>, name: string) =>
  (lds.get("virtualInbound")!.filter_chains as Obj[]).find((c) => c.name === name)!;
const alpnOfChain = (chain: Obj) => (chain.filter_chain_match as Obj).application_protocols;
const filterNames = (chain: Obj) => (chain.filters as Obj[]).map((f) => f.name);
const httpFilterNames = (chain: Obj) =>
  (((chain.filters as Obj[])[0].typed_config as Obj).http_filters as Obj[]).map((f) => f.name);

/** The ALPN a cluster's mesh mTLS offers, from its transport socket or its `tlsMode-istio` match. */
function clusterAlpn(cluster: Obj): unknown {
  const socket = (cluster.transport_socket ??
    (cluster.transport_socket_matches as Obj[]).find((m) => m.name === "tlsMode-istio")!
      .transport_socket) as Obj;
  return ((socket.typed_config as Obj).common_tls_context as Obj).alpn_protocols;
}

Deno.test("With TCP metadata exchange on (the default), mesh mTLS offers and matches istio-peer-exchange", () => {
  const { lds, cds } = generate(true);
  assert.deepEqual(clusterAlpn(cds.get(RATINGS_CLUSTER)!), ["istio-peer-exchange", "istio"]);
  assert.deepEqual(clusterAlpn(cds.get(GREETER_CLUSTER)!), ["istio-peer-exchange", "istio"]);
  const tcp = inboundChain(lds, "inbound|7000|mtls");
  assert.deepEqual(alpnOfChain(tcp), ["istio-peer-exchange", "istio"]);
  assert.deepEqual(filterNames(tcp), ["istio.metadata_exchange", "envoy.filters.network.tcp_proxy"]);
  const outbound = (lds.get("10.96.0.41_7000")!.filter_chains as Obj[]).at(-1)!;
  assert.deepEqual(filterNames(outbound), ["istio.metadata_exchange", "envoy.filters.network.tcp_proxy"]);
});

Deno.test("DISCOVERY_ENABLE_TCP_METADATA_EXCHANGE=false drops istio-peer-exchange and the TCP exchange filter", () => {
  const { lds, cds } = generate(false);
  assert.deepEqual(clusterAlpn(cds.get(RATINGS_CLUSTER)!), ["istio"]);
  assert.deepEqual(clusterAlpn(cds.get(GREETER_CLUSTER)!), ["istio"]);
  const tcp = inboundChain(lds, "inbound|7000|mtls");
  assert.deepEqual(alpnOfChain(tcp), ["istio"]);
  assert.deepEqual(filterNames(tcp), ["envoy.filters.network.tcp_proxy"]);
  assert.deepEqual(alpnOfChain(inboundChain(lds, "inbound|9080|mtls")), ["istio"]);
  const outbound = (lds.get("10.96.0.41_7000")!.filter_chains as Obj[]).at(-1)!;
  assert.deepEqual(filterNames(outbound), ["envoy.filters.network.tcp_proxy"]);
  assert.ok(
    httpFilterNames(inboundChain(lds, "inbound|9080|mtls")).includes("istio.metadata_exchange"),
    "HTTP chains keep the HTTP exchange filter",
  );
});
