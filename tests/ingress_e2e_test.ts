/**
 * Orchestrator Ingresses end to end: the real `mesh-discovery` reads an Ingress of class `mesh` with a TLS
 * secret from the test API server; the ingress gateway (in the ingress namespace, `mesh: ingressgateway`) gets
 * an HTTPS listener on 443 terminating with the secret, an HTTP listener on 80, routes to the Ingress's backend,
 * and the secret itself over SDS on the secure port; the Ingress's status names the gateway Service's load
 * balancer address. Editing the Ingress moves the route; deleting it takes the gateway's listeners away.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { TYPE_URL } from "../proto/type_urls.ts";
import { makePluggedInCa } from "../shared/testing/plugged_in_ca.ts";
import { OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { TestAdsClient, type TestAdsClient as Client, testNode } from "../discovery/xds/_test_ads_client.ts";
import {
  discoveryAddresses,
  discoveryArgs,
  orchestratorFlags,
  startProgram,
  untilReady,
} from "./helpers/programs.ts";
import { credentialsAs, fetchUntil } from "./helpers/gateway_fixture.ts";
import { waitFor } from "../shared/testing/wait_for.ts";

type Obj = Record<string, unknown>;
const DAY = 24 * 3_600_000;

const GATEWAY_NODE = testNode("router~10.8.0.9~ingressgateway-1.mesh-system~mesh-system.svc.cluster.local", {
  NAMESPACE: "mesh-system",
  LABELS: { mesh: "ingressgateway" },
});

function ingress(path: string) {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name: "shop", namespace: "shop", annotations: { "kubernetes.io/ingress.class": "mesh" } },
    spec: {
      tls: [{ hosts: ["shop.example.com"], secretName: "shop-cert" }],
      rules: [{
        host: "shop.example.com",
        http: {
          paths: [{
            path,
            pathType: "Prefix",
            backend: { service: { name: "shop", port: { name: "http" } } },
          }],
        },
      }],
    },
  };
}

Deno.test("An Ingress of the mesh's class becomes the ingress gateway's listeners, routes and SDS secret", async () => {
  const credential = await makePluggedInCa(DAY);
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_ingress_e2e_" });
  api.apply({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "shop", namespace: "shop" },
    spec: { clusterIP: "10.96.0.30", ports: [{ name: "http", port: 8080 }] },
  });
  // The ingress gateway's Service, whose load balancer address the Ingress's status names.
  api.apply({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "mesh-ingressgateway", namespace: "mesh-system" },
    spec: { type: "LoadBalancer", clusterIP: "10.96.0.99", ports: [{ name: "https", port: 443 }] },
    status: { loadBalancer: { ingress: [{ ip: "203.0.113.7" }] } },
  });
  api.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "shop-cert", namespace: "mesh-system" },
    data: {
      "tls.crt": Buffer.from(credential.files["ca-cert.pem"]).toString("base64"),
      "tls.key": Buffer.from(credential.files["ca-key.pem"]).toString("base64"),
    },
  });
  api.apply(ingress("/api"));
  // An Ingress for another controller is left alone.
  api.apply({
    ...ingress("/other"),
    metadata: { name: "other", namespace: "shop", annotations: { "kubernetes.io/ingress.class": "nginx" } },
  });
  await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
  const credentials = await credentialsAs("spiffe://cluster.local/ns/mesh-system/sa/ingressgateway", dir);
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      ...orchestratorFlags(`${dir}/kubeconfig`),
      "--log_as_json",
    ]),
    { ROOT_CA_DIR: dir, XDS_AUTH: "true" },
  );
  let client: Client | undefined;
  try {
    await untilReady(addresses.httpAddr);
    client = TestAdsClient.sotwTls(
      Number(addresses.secureGRPCAddr.split(":").at(-1)),
      credentials,
      "localhost",
    );
    const fetchType = (typeUrl: string, names: string[], until: (r: Obj[]) => boolean) =>
      fetchUntil(client!, GATEWAY_NODE, typeUrl, names, until);
    const listeners = await fetchType(
      TYPE_URL.listener,
      [],
      (r) => ["0.0.0.0_443", "0.0.0.0_80"].every((name) => r.some((l) => l.name === name)),
    );
    const https = JSON.stringify(listeners.find((l) => l.name === "0.0.0.0_443"));
    assert.match(https, /"name":"shop-cert"/);
    assert.match(https, /"server_names":\["shop\.example\.com"\]/);
    const httpRoute = JSON.stringify(listeners.find((l) => l.name === "0.0.0.0_80")).match(
      /"route_config_name":"([^"]+)"/,
    )![1];
    const routeHas = (pattern: RegExp) => (r: Obj[]) => r.length === 1 && pattern.test(JSON.stringify(r[0]));
    const [routes] = await fetchType(TYPE_URL.route, [httpRoute], routeHas(/"prefix":"\/api\/"/));
    const text = JSON.stringify(routes);
    assert.match(text, /outbound\|8080\|\|shop\.shop\.svc\.cluster\.local/);
    assert.match(text, /"path":"\/api"/, "a Prefix path matches the path itself too");
    assert.doesNotMatch(text, /\/other/, "the other controller's Ingress is not translated");
    const [secret] = await fetchType(TYPE_URL.secret, ["shop-cert"], (r) => r.length === 1);
    assert.ok(JSON.stringify(secret).includes(JSON.stringify(credential.files["ca-cert.pem"]).slice(1, -1)));

    // The leader of `mesh-leader` writes where the Ingress is served, as `kubectl get ingress` shows it.
    await waitFor(async () => {
      const stored =
        await (await fetch(`${api.url}/apis/networking.k8s.io/v1/namespaces/shop/ingresses/shop`))
          .json();
      return JSON.stringify(stored.status?.loadBalancer) ===
        JSON.stringify({ ingress: [{ ip: "203.0.113.7" }] });
    }, "the Ingress's status names the gateway's load balancer address");

    api.apply(ingress("/shop"));
    await fetchType(TYPE_URL.route, [httpRoute], routeHas(/"prefix":"\/shop\/"/));

    api.delete("networking.k8s.io/v1", "Ingress", "shop", "shop");
    await fetchType(TYPE_URL.listener, [], (r) => r.every((l) => l.name !== "0.0.0.0_443"));
  } finally {
    client?.close();
    await server.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});
