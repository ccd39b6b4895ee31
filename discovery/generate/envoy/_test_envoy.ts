/**
 * Test support: Envoy sidecars and a mesh exercising what the Envoy generators translate.
 *
 * @module
 */
import type { Resource } from "@mesh/shared/config/resource";
import { parseProxy, type Proxy } from "../../model/proxy.ts";
import { greeterResources, MESH, networking, type World } from "../_test_world.ts";
import type { SecretStore } from "../../model/secret_store.ts";
import { buildPushContext, type PushContext, type PushContextInputs } from "../../push/push_context.ts";

/** An Envoy sidecar in `namespace` at `ip` (no GENERATOR metadata: the default family). */
export function envoySidecar(
  namespace = "example",
  ip = "10.9.9.9",
  labels: Record<string, string> = {},
): Proxy {
  return parseProxy({
    id: `sidecar~${ip}~app.${namespace}~${namespace}.svc.cluster.local`,
    metadata: { NAMESPACE: namespace, LABELS: labels, INSTANCE_IPS: ip },
  });
}

/** A gateway (`router`) proxy labelled `app: ingress` in namespace `example`. */
export function ingressGateway(
  verifiedIdentities: readonly string[] = ["spiffe://cluster.local/ns/example/sa/ingress"],
): Proxy {
  return {
    ...parseProxy({
      id: "router~10.8.0.1~ingress-1.example~example.svc.cluster.local",
      metadata: { NAMESPACE: "example", LABELS: { app: "ingress" } },
    }),
    verifiedIdentities,
  };
}

/** The push context of `world` with gateway credentials from `secrets` (and any other inputs given). */
export function pushWithSecrets(
  world: World,
  secrets: SecretStore,
  overrides: Partial<PushContextInputs> = {},
): PushContext {
  return buildPushContext({
    store: world.store,
    services: world.registry,
    mesh: MESH,
    domain: "cluster.local",
    endpoints: world.endpoints,
    secrets,
    ...overrides,
  });
}

/**
 * The greeter mesh plus: a mesh workload with a sidecar and a service account, a DNS service with and
 * without endpoints, a passthrough service, a service outside the mesh, and DestinationRules with each TLS mode.
 */
export function envoyResources(): Resource[] {
  return [
    ...greeterResources(),
    networking("ServiceEntry", "example", "ratings", {
      hosts: ["ratings.example.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: 8080, name: "http", protocol: "HTTP" }],
      workloadSelector: { labels: { app: "ratings" } },
    }),
    networking("WorkloadEntry", "example", "ratings-1", {
      address: "10.0.2.1",
      labels: { app: "ratings", "security.istio.io/tlsMode": "istio" },
      serviceAccount: "ratings",
      ports: { http: 9080 },
    }),
    networking("ServiceEntry", "example", "dns-with-endpoints", {
      hosts: ["db.example.com"],
      resolution: "DNS",
      ports: [{ number: 5432, name: "tcp", protocol: "TCP" }],
      endpoints: [{ address: "db1.example.com" }, { address: "db2.example.com", weight: 3 }],
    }),
    networking("ServiceEntry", "example", "dns-bare", {
      hosts: ["api.example.com"],
      resolution: "DNS",
      ports: [{ number: 443, name: "https", protocol: "HTTPS" }],
    }),
    networking("ServiceEntry", "example", "passthrough", {
      hosts: ["*.passthrough.example.com"],
      resolution: "NONE",
      ports: [{ number: 443, name: "tls", protocol: "TLS" }],
    }),
    networking("DestinationRule", "example", "db", {
      host: "db.example.com",
      trafficPolicy: {
        tls: {
          mode: "SIMPLE",
          caCertificates: "/etc/certs/ca.pem",
          subjectAltNames: ["db.example.com"],
          sni: "db",
        },
        connectionPool: {
          tcp: { tcpKeepalive: { probes: 3, time: "60s", interval: "10s" } },
          http: { idleTimeout: "30s", maxRequestsPerConnection: 5 },
        },
      },
    }),
    networking("DestinationRule", "example", "api", {
      host: "api.example.com",
      trafficPolicy: {
        tls: { mode: "MUTUAL", clientCertificate: "/c.pem", privateKey: "/k.pem", caCertificates: "/ca.pem" },
      },
    }),
    networking("DestinationRule", "example", "ratings", {
      host: "ratings",
      trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } },
      subsets: [{ name: "plain", labels: {}, trafficPolicy: { tls: { mode: "DISABLE" } } }],
    }),
  ];
}

/**
 * The `shop` Gateway of namespace `example`: HTTP on 80 and HTTPS on 443 with credential `shop-cert` in `tlsMode`,
 * for `shop.example.com`.
 */
export function shopGateway(tlsMode: "SIMPLE" | "MUTUAL" = "SIMPLE"): Resource {
  return networking("Gateway", "example", "shop", {
    selector: { app: "ingress" },
    servers: [
      { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["shop.example.com"] },
      {
        port: { number: 443, name: "https", protocol: "HTTPS" },
        hosts: ["shop.example.com"],
        tls: { mode: tlsMode, credentialName: "shop-cert" },
        name: "shop-https",
      },
    ],
  });
}

/** The `shop` VirtualService bound to {@link shopGateway}, routing `http` (by default all to ratings:8080). */
export function shopVirtualService(
  http: readonly Record<string, unknown>[] = [{
    route: [{ destination: { host: "ratings", port: { number: 8080 } } }],
  }],
): Resource {
  return networking("VirtualService", "example", "shop", {
    hosts: ["shop.example.com"],
    gateways: ["shop"],
    http,
  });
}
