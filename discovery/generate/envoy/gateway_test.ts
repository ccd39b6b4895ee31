import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import type { SecretStore, TlsSecret } from "../../model/secret_store.ts";
import { networking, run, World } from "../_test_world.ts";
import {
  envoyResources,
  ingressGateway,
  pushWithSecrets,
  shopGateway,
  shopVirtualService,
} from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import { envoyRdsGenerator } from "./envoy_rds.ts";
import { envoySdsGenerator } from "./envoy_sds.ts";

type Obj = Record<string, unknown>;
const RATINGS = "ratings.example.svc.cluster.local";
const SECRET: TlsSecret = { certChainPem: "CHAIN", privateKeyPem: "KEY", caCertPem: "CA" };
const secrets: SecretStore = {
  get: (namespace, name) => namespace === "example" && name === "shop-cert" ? SECRET : undefined,
  onChange: () => () => {},
};

function push(served = true) {
  const world = new World().apply(
    ...envoyResources(),
    shopGateway("MUTUAL"),
    shopVirtualService(),
  );
  return served ? pushWithSecrets(world, secrets) : world.push();
}

const gateway = ingressGateway();

Deno.test("A gateway gets a listener per server port, HTTP on RDS and HTTPS terminated with its credential over SDS", () => {
  const { byName, names } = run(envoyLdsGenerator, gateway, push());
  assert.deepEqual(names, ["0.0.0.0_80", "0.0.0.0_443"]);
  const https = JSON.stringify(byName.get("0.0.0.0_443"));
  assert.match(https, /"name":"shop-cert"/);
  assert.match(https, /"name":"shop-cert-cacert"/);
  assert.match(https, /"server_names":\["shop.example.com"\]/);
  assert.match(https, /"route_config_name":"https.443.shop-https"/);
  assert.match(JSON.stringify(byName.get("0.0.0.0_80")), /"route_config_name":"http.80"/);
});

Deno.test("Without the discovery server's secret store, a gateway's TLS credentials come from its agent's SDS socket", () => {
  const sdsSources = (served: boolean) => {
    const https = run(envoyLdsGenerator, gateway, push(served)).byName.get("0.0.0.0_443")!;
    const chain = ((https.filter_chains as Obj[])[0].transport_socket as Obj).typed_config as Obj;
    const common = chain.common_tls_context as Obj;
    return [
      ...(common.tls_certificate_sds_secret_configs as Obj[]),
      common.validation_context_sds_secret_config as Obj,
    ]
      .map((c) => JSON.stringify((c.sds_config as Obj).api_config_source ?? "ads"));
  };
  assert.deepEqual(sdsSources(true), ['"ads"', '"ads"']);
  for (const source of sdsSources(false)) assert.match(source, /"cluster_name":"sds-grpc"/);
});

Deno.test("A gateway's routes come from the VirtualServices bound to it, for the hosts its servers expose", () => {
  const { byName } = run(envoyRdsGenerator, gateway, push(), { names: ["http.80", "https.443.shop-https"] });
  for (const name of ["http.80", "https.443.shop-https"]) {
    const [host] = byName.get(name)!.virtual_hosts as Obj[];
    assert.deepEqual(host.domains, [
      "shop.example.com",
      `shop.example.com:${name.startsWith("http.") ? 80 : 443}`,
    ]);
    assert.equal(((host.routes as Obj[])[0].route as Obj).cluster, `outbound|8080||${RATINGS}`);
  }
});

Deno.test("A gateway's secrets come from the secret store of its namespace; unknown names are left out", () => {
  const { byName, names } = run(envoySdsGenerator, gateway, push(), {
    names: ["shop-cert", "shop-cert-cacert", "missing"],
  });
  assert.deepEqual(names, ["shop-cert", "shop-cert-cacert"]);
  assert.match(JSON.stringify(byName.get("shop-cert")), /CHAIN/);
  assert.match(JSON.stringify(byName.get("shop-cert-cacert")), /"inline_string":"CA"/);
});

Deno.test("Gateway secrets go only to a stream that proved an identity in the gateway's namespace", () => {
  const asked = { names: ["shop-cert", "shop-cert-cacert"] };
  for (const identities of [[], ["spiffe://cluster.local/ns/other/sa/ingress"], ["not a spiffe id"]]) {
    assert.deepEqual(
      run(envoySdsGenerator, ingressGateway(identities), push(), asked).names,
      [],
      `${identities}`,
    );
  }
  const unauthenticated = { ...ingressGateway(), verifiedIdentities: undefined };
  assert.deepEqual(run(envoySdsGenerator, unauthenticated, push(), asked).names, []);
  assert.deepEqual(
    run(envoySdsGenerator, ingressGateway(["spiffe://old.local/ns/example/sa/other"]), push(), asked).names,
    ["shop-cert", "shop-cert-cacert"],
  );
});

Deno.test("A MESH_MUTUAL (or ISTIO_MUTUAL) server terminates with the gateway's own certificate and requires mesh clients", () => {
  for (const mode of ["MESH_MUTUAL", "ISTIO_MUTUAL"]) {
    const world = new World().apply(
      ...envoyResources(),
      networking("Gateway", "example", "mesh", {
        selector: { app: "ingress" },
        servers: [
          {
            port: { number: 443, name: "https", protocol: "HTTPS" },
            hosts: ["*"],
            tls: { mode },
            name: "mesh",
          },
          {
            port: { number: 9443, name: "tls", protocol: "TLS" },
            hosts: ["*"],
            tls: { mode },
            name: "mesh-tcp",
          },
        ],
      }),
      networking("VirtualService", "example", "mesh-tcp", {
        hosts: ["*"],
        gateways: ["mesh"],
        tcp: [{
          match: [{ port: 9443 }],
          route: [{ destination: { host: "ratings", port: { number: 8080 } } }],
        }],
      }),
    );
    const { byName, bytes, names } = run(envoyLdsGenerator, gateway, pushWithSecrets(world, secrets));
    assert.deepEqual(names, ["0.0.0.0_443", "0.0.0.0_9443"], mode);
    for (const name of names) {
      const chain = (byName.get(name)!.filter_chains as Obj[])[0];
      const tls = (chain.transport_socket as Obj).typed_config as Obj;
      const common = tls.common_tls_context as Obj;
      const sources = [
        ...(common.tls_certificate_sds_secret_configs as Obj[]),
        common.validation_context_sds_secret_config as Obj,
      ];
      assert.deepEqual(sources.map((c) => c.name), ["default", "ROOTCA"], `${mode} ${name}`);
      // The workload identity is the agent's to serve, even while discovery serves named credentials.
      for (const source of sources) assert.match(JSON.stringify(source), /"cluster_name":"sds-grpc"/);
      assert.deepEqual(tls.require_client_certificate, { value: true });
      assert.equal(validatePgvAny(bytes.get(name)!).length, 0);
    }
  }
});

Deno.test("Every gateway resource passes Envoy's validation rules, and what listeners and routes name exists", () => {
  const p = push();
  const lds = run(envoyLdsGenerator, gateway, p);
  const text = JSON.stringify([...lds.byName.values()]);
  const routeNames = [...text.matchAll(/"route_config_name":"([^"]+)"/g)].map((m) => m[1]);
  const rds = run(envoyRdsGenerator, gateway, p, { names: routeNames });
  const cds = run(envoyCdsGenerator, gateway, p);
  const sds = run(envoySdsGenerator, gateway, p, { names: ["shop-cert", "shop-cert-cacert"] });
  assert.deepEqual(rds.names.sort(), [...routeNames].sort());
  for (const [name, bytes] of [...lds.bytes, ...rds.bytes, ...sds.bytes]) {
    const violations = validatePgvAny(bytes);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
  for (const [, cluster] of JSON.stringify([...rds.byName.values()]).matchAll(/"cluster":"([^"]+)"/g)) {
    assert.ok(cds.byName.has(cluster), `${cluster} is served by CDS`);
  }
});
