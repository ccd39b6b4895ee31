import assert from "node:assert/strict";
import type { SecretStore } from "../../model/secret_store.ts";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, ingressGateway, pushWithSecrets } from "./_test_envoy.ts";
import { envoyRdsGenerator } from "./envoy_rds.ts";

type Obj = Record<string, unknown>;
const secrets: SecretStore = {
  get: () => ({ certChainPem: "CHAIN", privateKeyPem: "KEY", caCertPem: "CA" }),
  onChange: () => () => {},
};

/** The domains of each virtual host of a route configuration, and the cluster of its first route. */
function virtualHosts(config: Obj | undefined): [string[], unknown][] {
  return ((config?.virtual_hosts ?? []) as Obj[]).map((vh) => [
    (vh.domains as string[]).filter((d) => !d.includes(":")),
    ((vh.routes as Obj[])[0].route as Obj).cluster,
  ]);
}

const toRatings = [{ route: [{ destination: { host: "ratings", port: { number: 8080 } } }] }];
const RATINGS = "outbound|8080||ratings.example.svc.cluster.local";

Deno.test("Envoy RDS of a gateway with 2,000 HTTPS servers, each with a host and a VirtualService of its own, gives each route configuration its host alone", () => {
  // Each route configuration read every server of the gateway (and searched the list for each one's index),
  // then planned every bound VirtualService before asking whether the server exposed its hosts: seconds of
  // the event loop for one gateway's RDS at this size.
  const n = 2000;
  const world = new World().apply(
    ...envoyResources(),
    networking("Gateway", "example", "tenants", {
      selector: { app: "ingress" },
      servers: Array.from({ length: n }, (_, i) => ({
        port: { number: 443, name: "https", protocol: "HTTPS" },
        hosts: [`t${i}.example.com`],
        tls: { mode: "SIMPLE", credentialName: `t${i}-cert` },
        name: `t${i}`,
      })),
    }),
    ...Array.from({ length: n }, (_, i) =>
      networking("VirtualService", "example", `t${i}`, {
        hosts: [`t${i}.example.com`],
        gateways: ["tenants"],
        http: toRatings,
      })),
  );
  const names = Array.from({ length: n }, (_, i) => `https.443.t${i}`);
  const { byName } = run(envoyRdsGenerator, ingressGateway(), pushWithSecrets(world, secrets), { names });
  assert.equal(byName.size, n);
  for (const i of [0, 1, 999, n - 1]) {
    assert.deepEqual(virtualHosts(byName.get(`https.443.t${i}`)), [[[`t${i}.example.com`], RATINGS]]);
  }
});

Deno.test("Envoy RDS of a gateway server gives each exposed host one virtual host, from the first VirtualService claiming it", () => {
  const world = new World().apply(
    ...envoyResources(),
    networking("Gateway", "example", "shop", {
      selector: { app: "ingress" },
      servers: [
        { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["a.example.com", "c.example.com"] },
        { port: { number: 8080, name: "wild", protocol: "HTTP" }, hosts: ["*.example.com"] },
      ],
    }),
    networking("VirtualService", "example", "first", {
      hosts: ["a.example.com", "a.example.com", "*.example.com"],
      gateways: ["shop"],
      http: toRatings,
    }),
    networking("VirtualService", "example", "second", {
      hosts: ["c.example.com", "a.example.com", "b.example.com"],
      gateways: ["shop"],
      http: [{ route: [{ destination: { host: "greeter" } }] }],
    }),
  );
  const push = pushWithSecrets(world, secrets);
  const { byName } = run(envoyRdsGenerator, ingressGateway(), push, { names: ["http.80", "http.8080"] });
  const greeter = "outbound|7070||greeter.example.svc.cluster.local";
  assert.deepEqual(virtualHosts(byName.get("http.80")), [
    [["a.example.com"], RATINGS],
    [["c.example.com"], greeter],
  ]);
  assert.deepEqual(virtualHosts(byName.get("http.8080")), [
    [["a.example.com"], RATINGS],
    [["*.example.com"], RATINGS],
    [["c.example.com"], greeter],
    [["b.example.com"], greeter],
  ]);
});
