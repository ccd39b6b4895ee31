import assert from "node:assert/strict";
import type { Resource } from "@mesh/shared/config/resource";
import { SECURITY_GROUP } from "@mesh/shared/config/kinds";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { DEFAULT_LISTENER_PLUGINS, type ListenerPlugins } from "../../push/push_context.ts";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";

type Obj = Record<string, unknown>;

function security(kind: string, namespace: string, name: string, spec: unknown): Resource {
  const r = networking(kind, namespace, name, spec);
  return { ...r, gvk: { ...r.gvk, group: SECURITY_GROUP } };
}

/** The sidecar's listeners in a mesh with STRICT mTLS, a JWT rule, an RBAC policy and a TCP service. */
function listeners(plugins: Partial<ListenerPlugins>): Map<string, Obj> {
  const push = new World().apply(
    ...envoyResources(),
    security("PeerAuthentication", "mesh-system", "default", { mtls: { mode: "STRICT" } }),
    security("RequestAuthentication", "example", "jwt", {
      selector: { matchLabels: { app: "ratings" } },
      jwtRules: [{ issuer: "https://issuer.example.com", jwks: '{"keys":[]}' }],
    }),
    security("AuthorizationPolicy", "example", "deny-all", { selector: { matchLabels: { app: "ratings" } } }),
    networking("ServiceEntry", "example", "db", {
      hosts: ["db.example.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      addresses: ["10.96.0.40"],
      ports: [{ number: 5432, name: "tcp", protocol: "TCP" }],
    }),
  ).push({ plugins: { ...DEFAULT_LISTENER_PLUGINS, ...plugins } });
  const lds = run(envoyLdsGenerator, envoySidecar("example", "10.0.2.1", { app: "ratings" }), push);
  for (const [name, encoded] of lds.bytes) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
  return lds.byName;
}

const inbound = (byName: Map<string, Obj>) => byName.get("virtualInbound")!.filter_chains as Obj[];
const httpFilterNames = (chain: Obj) =>
  (((chain.filters as Obj[])[0].typed_config as Obj).http_filters as Obj[]).map((f) => f.name);

Deno.test("With the default plugins, inbound ports take mesh mTLS, JWT checks and RBAC", () => {
  const chains = inbound(listeners({}));
  assert.deepEqual(chains.map((c) => c.name), ["inbound|9080|mtls", "virtualInbound-catchall"]);
  assert.deepEqual(httpFilterNames(chains[0]), [
    "envoy.filters.http.jwt_authn",
    "envoy.filters.http.rbac",
    "envoy.filters.http.fault",
    "envoy.filters.http.router",
  ]);
});

Deno.test("Without the authn plugin inbound ports are plaintext whatever PeerAuthentication says, with no JWT check", () => {
  const chains = inbound(listeners({ authn: false }));
  assert.deepEqual(chains.map((c) => c.name), ["inbound|9080|plaintext", "virtualInbound-catchall"]);
  assert.deepEqual(httpFilterNames(chains[0]), [
    "envoy.filters.http.rbac",
    "envoy.filters.http.fault",
    "envoy.filters.http.router",
  ]);
});

Deno.test("Without the authz plugin no AuthorizationPolicy becomes an RBAC filter", () => {
  const [chain] = inbound(listeners({ authz: false }));
  assert.deepEqual(httpFilterNames(chain), [
    "envoy.filters.http.jwt_authn",
    "envoy.filters.http.fault",
    "envoy.filters.http.router",
  ]);
});

Deno.test("The metadata_exchange plugin puts the exchange filter on every HTTP and mesh TCP chain, valid by Envoy's schema", () => {
  const byName = listeners({ metadataExchange: true, authz: false });
  assert.deepEqual(httpFilterNames(inbound(byName)[0]), [
    "envoy.filters.http.jwt_authn",
    "istio.metadata_exchange",
    "envoy.filters.http.fault",
    "envoy.filters.http.router",
  ]);
  const tcp = (byName.get("10.96.0.40_5432")!.filter_chains as Obj[]).at(-1)!;
  const [mx, proxy] = tcp.filters as Obj[];
  assert.equal(mx.name, "istio.metadata_exchange");
  assert.equal(proxy.name, "envoy.filters.network.tcp_proxy");
  const defaults = listeners({});
  assert.ok(!JSON.stringify([...defaults.values()]).includes("metadata_exchange"));
});
