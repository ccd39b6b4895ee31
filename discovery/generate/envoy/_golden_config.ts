/**
 * Test support: the configuration Envoy sidecars (one in a namespace without a Sidecar resource, one in a
 * namespace whose Sidecar narrows egress and declares ingress) and a gateway get from a representative mesh, as
 * JSON (the
 * decoded resources, by type and name), compared with the files in `tests/golden/envoy/` by the golden test and
 * rewritten by `deno task golden:update` after an intended change. Only tests and that task import this file.
 *
 * @module
 */
import { TYPE_URL } from "@mesh/proto/type_urls";
import { parseProxy } from "../../model/proxy.ts";
import type { SecretStore } from "../../model/secret_store.ts";
import { MESH, networking, run, World } from "../_test_world.ts";
import {
  envoyResources,
  envoySidecar,
  pushWithSecrets,
  shopGateway,
  shopVirtualService,
} from "./_test_envoy.ts";
import { envoyGenerators } from "./envoy_generators.ts";

/** The golden files, by name, relative to the repository root. */
export const GOLDEN_FILES = {
  sidecar: "tests/golden/envoy/sidecar.json",
  scopedSidecar: "tests/golden/envoy/sidecar_scoped.json",
  gateway: "tests/golden/envoy/gateway.json",
} as const;

const secrets: SecretStore = {
  get: (namespace, name) =>
    namespace === "example" && name === "shop-cert"
      ? { certChainPem: "CERT CHAIN", privateKeyPem: "KEY", caCertPem: "CA" }
      : undefined,
  onChange: () => () => {},
};

function push() {
  const world = new World().apply(
    ...envoyResources(),
    shopGateway(),
    shopVirtualService([{
      match: [{ uri: { prefix: "/api" } }],
      route: [{ destination: { host: "ratings" } }],
      timeout: "2s",
    }]),
    // A namespace whose Sidecar narrows what its workloads see and declares their inbound port.
    networking("ServiceEntry", "billing", "billing", {
      hosts: ["billing.billing.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: 7000, name: "http", protocol: "HTTP" }],
      workloadSelector: { labels: { app: "billing" } },
    }),
    networking("WorkloadEntry", "billing", "billing-1", {
      address: "10.0.9.1",
      labels: { app: "billing", "security.istio.io/tlsMode": "istio" },
      serviceAccount: "billing",
    }),
    networking("Sidecar", "billing", "default", {
      egress: [{ hosts: ["./*", "example/ratings.example.svc.cluster.local"] }],
      ingress: [{
        port: { number: 7000, protocol: "HTTP", name: "http" },
        defaultEndpoint: "127.0.0.1:7070",
      }],
      outboundTrafficPolicy: { mode: "REGISTRY_ONLY" },
    }),
  );
  // Access logs to stdout, as the reference's demo profile sets them, so the golden files show them too.
  return pushWithSecrets(world, secrets, {
    version: "golden",
    now: () => new Date("2026-01-01T00:00:00Z"),
    mesh: { ...MESH, accessLogFile: "/dev/stdout" },
  });
}

/** Every resource the proxy gets, by type then name; routes and secrets by the names the listeners ask for. */
function configOf(proxy: ReturnType<typeof parseProxy>): Record<string, Record<string, unknown>> {
  const p = push();
  const byType = new Map(envoyGenerators().map((g) => [g.typeUrl, g]));
  const out: Record<string, Record<string, unknown>> = {};
  const collect = (typeUrl: string, names: string[] = []) => {
    const generated = run(byType.get(typeUrl)!, proxy, p, { names });
    out[typeUrl.split(".").at(-1)!] = Object.fromEntries(
      [...generated.byName].sort(([a], [b]) => a < b ? -1 : 1),
    );
    return generated;
  };
  const lds = collect(TYPE_URL.listener);
  collect(TYPE_URL.cluster);
  const text = JSON.stringify([...lds.byName.values()]);
  collect(TYPE_URL.route, [
    ...new Set([...text.matchAll(/"route_config_name":"([^"]+)"/g)].map((m) => m[1])),
  ]);
  collect(TYPE_URL.endpoint);
  // Gateways fetch their credentials over ADS by the names their TLS filter chains give.
  collect(
    TYPE_URL.secret,
    [
      ...new Set(
        [...text.matchAll(/"tls_certificate_sds_secret_configs":\[\{"name":"([^"]+)"/g)].map((m) => m[1]),
      ),
    ].filter((name) => name !== "default"),
  );
  return out;
}

/** The golden documents, as the files hold them. */
export function goldenDocuments(): Record<keyof typeof GOLDEN_FILES, string> {
  // Connected on the secure port as its namespace's identity, so it may read its credentials.
  const gateway = {
    ...parseProxy({
      id: "router~10.8.0.1~ingress-1.example~example.svc.cluster.local",
      metadata: { NAMESPACE: "example", LABELS: { app: "ingress" } },
    }),
    verifiedIdentities: ["spiffe://cluster.local/ns/example/sa/ingress"],
  };
  const render = (value: unknown) => JSON.stringify(value, null, 2) + "\n";
  return {
    sidecar: render(configOf(envoySidecar("example", "10.0.2.1", { app: "ratings" }))),
    scopedSidecar: render(configOf(envoySidecar("billing", "10.0.9.1", { app: "billing" }))),
    gateway: render(configOf(gateway)),
  };
}
