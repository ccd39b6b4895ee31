import assert from "node:assert/strict";
import type { Resource } from "@mesh/shared/config/resource";
import { SECURITY_GROUP } from "@mesh/shared/config/kinds";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";

type Obj = Record<string, unknown>;

function security(kind: string, namespace: string, name: string, spec: unknown): Resource {
  const r = networking(kind, namespace, name, spec);
  return { ...r, gvk: { ...r.gvk, group: SECURITY_GROUP } };
}

const JWKS = JSON.stringify({ keys: [{ kty: "RSA", n: "AQAB", e: "AQAB", kid: "k" }] });

function world() {
  return new World().apply(
    ...envoyResources(),
    security("RequestAuthentication", "example", "jwt", {
      selector: { matchLabels: { app: "ratings" } },
      jwtRules: [
        {
          issuer: "https://issuer.example.com",
          jwks: JWKS,
          audiences: ["ratings"],
          forwardOriginalToken: true,
        },
        {
          issuer: "https://accounts.example.org",
          jwksUri: "https://keys.example.org/jwks.json",
          fromHeaders: [{ name: "x-token", prefix: "Bearer " }],
        },
      ],
    }),
    security("AuthorizationPolicy", "example", "need-jwt", {
      selector: { matchLabels: { app: "ratings" } },
      rules: [{ from: [{ source: { requestPrincipals: ["https://issuer.example.com/alice"] } }] }],
    }),
  );
}

Deno.test("RequestAuthentication puts a JWT filter before RBAC on inbound HTTP chains; tokens are optional there", () => {
  const proxy = envoySidecar("example", "10.0.2.1", { app: "ratings" });
  const push = world().push();
  const lds = run(envoyLdsGenerator, proxy, push);
  const chain = (lds.byName.get("virtualInbound")!.filter_chains as Obj[]).find((c) =>
    c.name === "inbound|9080|plaintext"
  )!;
  const hcm = (chain.filters as Obj[])[0].typed_config as Obj;
  const filters = hcm.http_filters as Obj[];
  assert.deepEqual(filters.map((f) => f.name), [
    "envoy.filters.http.jwt_authn",
    "envoy.filters.http.rbac",
    "envoy.filters.http.fault",
    "envoy.filters.http.router",
  ]);
  const jwt = filters[0].typed_config as Obj;
  const providers = jwt.providers as Record<string, Obj>;
  assert.equal(providers["origins-0"].issuer, "https://issuer.example.com");
  assert.deepEqual(providers["origins-0"].local_jwks, { inline_string: JWKS });
  assert.equal(providers["origins-0"].forward, true);
  assert.deepEqual((providers["origins-1"].remote_jwks as Obj).http_uri, {
    uri: "https://keys.example.org/jwks.json",
    cluster: "jwks|keys.example.org|443",
    timeout: { seconds: "5" },
  });
  assert.deepEqual(providers["origins-1"].from_headers, [{ name: "x-token", value_prefix: "Bearer " }]);
  assert.match(JSON.stringify(jwt.rules), /"allow_missing":\{\}/);
  const rbac = JSON.stringify(filters[1]);
  assert.match(rbac, /"key":"iss"\}\],"value":\{"string_match":\{"exact":"https:\/\/issuer.example.com"\}/);
  assert.match(rbac, /"key":"sub"\}\],"value":\{"string_match":\{"exact":"alice"\}/);
  const violations = validatePgvAny(lds.bytes.get("virtualInbound")!);
  assert.equal(violations.length, 0, formatPgvViolations(violations));
});

Deno.test("A jwksUri gets a DNS cluster the proxy fetches keys through, verified with the system roots", () => {
  const cds = run(envoyCdsGenerator, envoySidecar("example", "10.0.2.1", { app: "ratings" }), world().push());
  const cluster = cds.byName.get("jwks|keys.example.org|443")!;
  assert.equal(cluster.type, "STRICT_DNS");
  assert.match(JSON.stringify(cluster.transport_socket), /"sni":"keys.example.org"/);
  const violations = validatePgvAny(cds.bytes.get("jwks|keys.example.org|443")!);
  assert.equal(violations.length, 0, formatPgvViolations(violations));
  const other = run(envoyCdsGenerator, envoySidecar("example", "10.0.2.9", { app: "other" }), world().push());
  assert.ok(
    !other.byName.has("jwks|keys.example.org|443"),
    "only workloads the RequestAuthentication selects",
  );
});
