import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { parseProxy } from "../../model/proxy.ts";
import type { SecretStore } from "../../model/secret_store.ts";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, ingressGateway, pushWithSecrets } from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import { envoyRdsGenerator } from "./envoy_rds.ts";

type Obj = Record<string, unknown>;
const RATINGS = "ratings.example.svc.cluster.local";
const secrets: SecretStore = { get: () => undefined, onChange: () => () => {} };

function push() {
  const world = new World().apply(
    ...envoyResources(),
    networking("Gateway", "example", "edge", {
      selector: { app: "ingress" },
      servers: [
        { port: { number: 5432, name: "tcp", protocol: "TCP" }, hosts: ["*"] },
        {
          port: { number: 443, name: "tls", protocol: "TLS" },
          hosts: ["*.example.com"],
          tls: { mode: "PASSTHROUGH" },
        },
        {
          port: { number: 15443, name: "tls-mesh", protocol: "TLS" },
          hosts: ["*.local"],
          tls: { mode: "AUTO_PASSTHROUGH" },
        },
      ],
    }),
    networking("VirtualService", "example", "edge-tcp", {
      hosts: ["*"],
      gateways: ["edge"],
      tcp: [
        { match: [{ port: 5432 }], route: [{ destination: { host: "ratings", port: { number: 8080 } } }] },
      ],
      tls: [{
        match: [{ port: 443, sniHosts: ["a.example.com"] }],
        route: [
          { destination: { host: "ratings", subset: "plain", port: { number: 8080 } }, weight: 80 },
          { destination: { host: "ratings", port: { number: 8080 } }, weight: 20 },
        ],
      }, {
        match: [{ port: 443, sniHosts: ["b.other.org"] }],
        route: [{ destination: { host: "ratings", port: { number: 8080 } } }],
      }],
    }),
  );
  return pushWithSecrets(world, secrets);
}

const gateway = ingressGateway();

const tcpProxyOf = (
  chain: Obj,
) => ((chain.filters as Obj[]).find((f) => f.name === "envoy.filters.network.tcp_proxy")!
  .typed_config as Obj);

Deno.test("A gateway TCP server forwards to the bound VirtualService's TCP route", () => {
  const { byName } = run(envoyLdsGenerator, gateway, push());
  const [chain] = byName.get("0.0.0.0_5432")!.filter_chains as Obj[];
  assert.equal(tcpProxyOf(chain).cluster, `outbound|8080||${RATINGS}`);
});

Deno.test("A PASSTHROUGH server routes by SNI with the bound TLS routes whose hosts it exposes", () => {
  const { byName } = run(envoyLdsGenerator, gateway, push());
  const listener = byName.get("0.0.0.0_443")!;
  const chains = listener.filter_chains as Obj[];
  assert.equal(chains.length, 1, "b.other.org is not among the server's hosts");
  assert.deepEqual((chains[0].filter_chain_match as Obj).server_names, ["a.example.com"]);
  assert.deepEqual(tcpProxyOf(chains[0]).weighted_clusters, {
    clusters: [
      { name: `outbound|8080|plain|${RATINGS}`, weight: 80 },
      { name: `outbound|8080||${RATINGS}`, weight: 20 },
    ],
  });
  assert.equal(chains[0].transport_socket, undefined, "passthrough does not terminate TLS");
  assert.match(JSON.stringify(listener.listener_filters), /tls_inspector/);
});

Deno.test("An AUTO_PASSTHROUGH server routes by SNI to the mesh's SNI-named clusters, which CDS serves", () => {
  const p = push();
  const { byName, bytes } = run(envoyLdsGenerator, gateway, p);
  const [chain] = byName.get("0.0.0.0_15443")!.filter_chains as Obj[];
  assert.deepEqual((chain.filters as Obj[]).map((f) => f.name), [
    "envoy.filters.network.sni_cluster",
    "envoy.filters.network.tcp_proxy",
  ]);
  const cds = run(envoyCdsGenerator, gateway, p);
  const dnat = cds.byName.get(`outbound_.8080_._.${RATINGS}`)!;
  assert.equal((dnat.eds_cluster_config as Obj).service_name, `outbound|8080||${RATINGS}`);
  assert.equal(dnat.transport_socket, undefined, "the client's mTLS passes through");
  assert.ok(cds.byName.has(`outbound_.8080_.plain_.${RATINGS}`), "subsets too");
  for (const [name, encoded] of [...bytes, ...cds.bytes]) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
});

Deno.test("A sidecar gets no SNI-named clusters", () => {
  const sidecar = parseProxy({
    id: "sidecar~10.0.2.1~app-1.example~example.svc.cluster.local",
    metadata: { NAMESPACE: "example" },
  });
  const cds = run(envoyCdsGenerator, sidecar, push());
  assert.ok(![...cds.byName.keys()].some((name) => name.startsWith("outbound_.")));
});

Deno.test("An HTTP server with httpsRedirect makes its hosts redirect to HTTPS, routed or not", () => {
  const world = new World().apply(
    ...envoyResources(),
    networking("Gateway", "example", "web", {
      selector: { app: "ingress" },
      servers: [{
        port: { number: 80, name: "http", protocol: "HTTP" },
        hosts: ["shop.example.com", "docs.example.com"],
        tls: { httpsRedirect: true },
      }],
    }),
    networking("VirtualService", "example", "shop", {
      hosts: ["shop.example.com"],
      gateways: ["web"],
      http: [{ route: [{ destination: { host: RATINGS, port: { number: 8080 } } }] }],
    }),
  );
  const rds = run(envoyRdsGenerator, gateway, pushWithSecrets(world, secrets), { names: ["http.80"] });
  const hosts = rds.byName.get("http.80")!.virtual_hosts as Obj[];
  assert.deepEqual(hosts.map((h) => [h.name, h.require_tls]), [
    ["shop.example.com:80", "ALL"],
    ["docs.example.com:80", "ALL"],
  ]);
});
