import assert from "node:assert/strict";
import type { Resource } from "@mesh/shared/config/resource";
import { SECURITY_GROUP } from "@mesh/shared/config/kinds";
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { Proxy } from "../../model/proxy.ts";
import type { SecretStore, TlsSecret } from "../../model/secret_store.ts";
import type { PushContext } from "../../push/push_context.ts";
import { mayAffect, type XdsGenerator } from "../generator.ts";
import { networking, run, World } from "../_test_world.ts";
import {
  envoyResources,
  envoySidecar,
  ingressGateway,
  pushWithSecrets,
  shopGateway,
  shopVirtualService,
} from "./_test_envoy.ts";
import { envoyGenerators } from "./envoy_generators.ts";

const CDS = TYPE_URL.cluster, EDS = TYPE_URL.endpoint, LDS = TYPE_URL.listener, RDS = TYPE_URL.route;
const SDS = TYPE_URL.secret;
const SHORT: Record<string, string> = {
  [CDS]: "CDS",
  [EDS]: "EDS",
  [LDS]: "LDS",
  [RDS]: "RDS",
  [SDS]: "SDS",
};

function security(kind: string, namespace: string, name: string, spec: unknown): Resource {
  const r = networking(kind, namespace, name, spec);
  return { ...r, gvk: { ...r.gvk, group: SECURITY_GROUP } };
}

function secretStore(chain: string): SecretStore {
  const secret: TlsSecret = { certChainPem: chain, privateKeyPem: "KEY", caCertPem: "CA" };
  return {
    get: (namespace, name) => namespace === "example" && name === "shop-cert" ? secret : undefined,
    onChange: () => () => {},
  };
}

/** A sidecar of the `ratings` workload: it has inbound ports, so inbound security applies to it. */
const sidecar = envoySidecar("example", "10.0.2.1", { app: "ratings" });
const gateway = ingressGateway();

/** The mesh every change is made to: the Envoy test mesh, a gateway serving it, and its credential. */
function baseWorld(): World {
  return new World().apply(
    ...envoyResources(),
    shopGateway(),
    shopVirtualService(),
  );
}

/** One change of each kind, each one a proxy would see in some type. */
const CHANGES: Record<string, { apply: (world: World) => void; chain?: string }> = {
  VirtualService: {
    apply: (w) =>
      w.apply(
        networking("VirtualService", "example", "db", {
          hosts: ["db.example.com"],
          tcp: [{
            route: [
              { destination: { host: "db.example.com", port: { number: 5432 } }, weight: 70 },
              { destination: { host: "api.example.com", port: { number: 443 } }, weight: 30 },
            ],
          }],
        }),
        networking("VirtualService", "example", "ratings-split", {
          hosts: ["ratings.example.svc.cluster.local"],
          gateways: ["mesh", "shop"],
          http: [{ route: [{ destination: { host: "ratings", subset: "plain" } }], timeout: "3s" }],
        }),
      ),
  },
  DestinationRule: {
    apply: (w) =>
      w.apply(networking("DestinationRule", "example", "ratings", {
        host: "ratings",
        trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" }, loadBalancer: { simple: "LEAST_CONN" } },
        subsets: [
          { name: "plain", labels: {}, trafficPolicy: { tls: { mode: "DISABLE" } } },
          { name: "hashed", labels: { app: "ratings" } },
        ],
      })),
  },
  Gateway: {
    apply: (w) =>
      w.apply(networking("Gateway", "example", "more", {
        selector: { app: "ingress" },
        servers: [{ port: { number: 8081, name: "http-more", protocol: "HTTP" }, hosts: ["*"] }],
      })),
  },
  Secret: { apply: () => {}, chain: "ROTATED" },
  PeerAuthentication: {
    apply: (w) => w.apply(security("PeerAuthentication", "example", "strict", { mtls: { mode: "STRICT" } })),
  },
  AuthorizationPolicy: {
    apply: (w) =>
      w.apply(security("AuthorizationPolicy", "example", "deny-all", {
        selector: { matchLabels: { app: "ratings" } },
        action: "DENY",
        rules: [{}],
      })),
  },
  RequestAuthentication: {
    apply: (w) =>
      w.apply(security("RequestAuthentication", "example", "jwt", {
        selector: { matchLabels: { app: "ratings" } },
        jwtRules: [{ issuer: "https://issuer.example.com", jwksUri: "https://issuer.example.com/jwks" }],
      })),
  },
  Sidecar: {
    apply: (w) =>
      w.apply(networking("Sidecar", "example", "default", {
        egress: [{ hosts: ["./ratings.example.svc.cluster.local"] }],
      })),
  },
};

/** The names a request of each type asks for, by proxy type: what Envoy watches in the test mesh. */
function namesFor(proxy: Proxy, typeUrl: string): string[] {
  if (proxy.type !== "router") return [];
  if (typeUrl === RDS) return ["http.80", "https.443.shop-https"];
  if (typeUrl === SDS) return ["shop-cert", "shop-cert-cacert"];
  return [];
}

/** What each generator gives `proxy` from `push`: names with their encoded bytes. */
function generated(generator: XdsGenerator<PushContext>, proxy: Proxy, push: PushContext): string {
  const { names, bytes } = run(generator, proxy, push, { names: namesFor(proxy, generator.typeUrl) });
  return JSON.stringify(names.map((name) => [name, [...bytes.get(name)!]]));
}

/** The types a change of `kind` makes the server regenerate for `proxy`, in push order. */
function regenerated(kind: string, proxy: Proxy): string[] {
  return envoyGenerators().filter((g) => mayAffect(g, proxy, new Set([kind]))).map((g) => SHORT[g.typeUrl]);
}

Deno.test("A config change regenerates, for each Envoy proxy type, only the types that read its kind", () => {
  const expected: Record<string, { sidecar: string[]; router: string[] }> = {
    VirtualService: { sidecar: ["LDS", "RDS"], router: ["CDS", "LDS", "RDS"] },
    DestinationRule: { sidecar: ["CDS", "EDS", "RDS"], router: ["CDS", "EDS", "LDS", "RDS"] },
    Gateway: { sidecar: [], router: ["CDS", "LDS", "RDS"] },
    Secret: { sidecar: ["SDS"], router: ["LDS", "SDS"] },
    PeerAuthentication: { sidecar: ["LDS"], router: ["LDS"] },
    AuthorizationPolicy: { sidecar: ["LDS"], router: ["LDS"] },
    RequestAuthentication: { sidecar: ["CDS", "LDS"], router: ["LDS"] },
    Sidecar: { sidecar: ["CDS", "EDS", "LDS", "RDS"], router: ["EDS", "LDS"] },
    ServiceEntry: { sidecar: ["CDS", "EDS", "LDS", "RDS"], router: ["CDS", "EDS", "LDS", "RDS"] },
    EnvoyFilter: {
      sidecar: ["CDS", "EDS", "LDS", "RDS", "SDS"],
      router: ["CDS", "EDS", "LDS", "RDS", "SDS"],
    },
  };
  for (const [kind, types] of Object.entries(expected)) {
    assert.deepEqual(regenerated(kind, sidecar), types.sidecar, `${kind} for a sidecar`);
    assert.deepEqual(regenerated(kind, gateway), types.router, `${kind} for a gateway`);
  }
});

Deno.test("Unknown changes, or none named, regenerate every Envoy type", () => {
  for (const generator of envoyGenerators()) {
    assert.ok(mayAffect(generator, sidecar, undefined));
    assert.ok(mayAffect(generator, sidecar, new Set()));
  }
});

Deno.test("A type a change's kind is declared not to affect generates the same bytes after the change", async (t) => {
  for (const [kind, change] of Object.entries(CHANGES)) {
    await t.step(kind, () => {
      const before = baseWorld();
      const beforePush = pushWithSecrets(before, secretStore("CHAIN"));
      const after = baseWorld();
      change.apply(after);
      const afterPush = pushWithSecrets(after, secretStore(change.chain ?? "CHAIN"));
      let changedSomewhere = false;
      for (const proxy of [sidecar, gateway]) {
        for (const generator of envoyGenerators()) {
          const same = generated(generator, proxy, beforePush) === generated(generator, proxy, afterPush);
          changedSomewhere ||= !same;
          if (mayAffect(generator, proxy, new Set([kind]))) continue;
          assert.ok(
            same,
            `a ${kind} change is declared not to affect ${SHORT[generator.typeUrl]} of a ${proxy.type}`,
          );
        }
      }
      assert.ok(changedSomewhere, `the ${kind} change is seen by some type, so the test can tell`);
    });
  }
});
