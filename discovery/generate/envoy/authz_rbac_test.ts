import assert from "node:assert/strict";
import type { Resource } from "@mesh/shared/config/resource";
import { SECURITY_GROUP } from "@mesh/shared/config/kinds";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";

type Obj = Record<string, unknown>;

function policy(namespace: string, name: string, spec: unknown): Resource {
  const r = networking("AuthorizationPolicy", namespace, name, spec);
  return { ...r, gvk: { ...r.gvk, group: SECURITY_GROUP } };
}

/** The virtualInbound listener of the ratings workload (HTTP port 9080) under `policies`. */
function inbound(...policies: Resource[]) {
  const push = new World().apply(...envoyResources(), ...policies).push();
  const lds = run(envoyLdsGenerator, envoySidecar("example", "10.0.2.1", { app: "ratings" }), push);
  const violations = validatePgvAny(lds.bytes.get("virtualInbound")!);
  assert.equal(violations.length, 0, formatPgvViolations(violations));
  return lds.byName.get("virtualInbound")!;
}

/** The RBAC filters (by action) of the first HTTP chain. */
function httpRbac(listener: Obj): Obj[] {
  const chain = (listener.filter_chains as Obj[]).find((c) => String(c.name).startsWith("inbound|9080|"))!;
  const hcm = (chain.filters as Obj[])[0].typed_config as Obj;
  return (hcm.http_filters as Obj[]).filter((f) => f.name === "envoy.filters.http.rbac")
    .map((f) => (f.typed_config as Obj).rules as Obj);
}

Deno.test("Without AuthorizationPolicies no RBAC filter is added", () => {
  assert.deepEqual(httpRbac(inbound()), []);
});

Deno.test("DENY is checked before ALLOW; rules become Envoy policies with principals and permissions", () => {
  const rules = httpRbac(inbound(
    policy("example", "allow-frontend", {
      selector: { matchLabels: { app: "ratings" } },
      action: "ALLOW",
      rules: [{
        from: [{ source: { principals: ["cluster.local/ns/web/sa/frontend"], namespaces: ["web"] } }],
        to: [{ operation: { methods: ["GET"], paths: ["/api/*"] } }],
      }],
    }),
    policy("example", "deny-bad-net", {
      action: "DENY",
      rules: [{ from: [{ source: { ipBlocks: ["10.66.0.0/16"] } }] }],
    }),
    policy("example", "someone-else", { selector: { matchLabels: { app: "other" } }, rules: [{}] }),
  ));
  assert.deepEqual(rules.map((r) => r.action), ["DENY", "ALLOW"]);
  assert.deepEqual(Object.keys(rules[1].policies as Obj), ["ns[example]-policy[allow-frontend]-rule[0]"]);
  const text = JSON.stringify(rules);
  assert.match(text, /"exact":"spiffe:\/\/cluster.local\/ns\/web\/sa\/frontend"/);
  assert.match(text, /\.\*\/ns\/web\/\.\*/);
  assert.match(text, /"name":":method","string_match":\{"exact":"GET"\}/);
  assert.match(text, /"url_path":\{"path":\{"prefix":"\/api\/"\}\}/);
  assert.match(text, /"address_prefix":"10.66.0.0","prefix_len":\{"value":16\}/);
  assert.ok(!text.includes("someone-else"), "a policy selecting other workloads does not apply");
});

Deno.test("An ALLOW policy without rules allows nothing; rules: [{}] allows everything", () => {
  const none = httpRbac(inbound(policy("example", "nothing", { action: "ALLOW" })));
  assert.equal(none.length, 1);
  assert.equal(none[0].action, "ALLOW");
  assert.equal(
    Object.keys((none[0].policies ?? {}) as Obj).length,
    0,
    "an ALLOW filter with no policy denies all",
  );
  const all = httpRbac(inbound(policy("example", "everything", { rules: [{}] })));
  assert.match(JSON.stringify(all), /"permissions":\[\{"any":true\}\],"principals":\[\{"any":true\}\]/);
});

Deno.test("CUSTOM policies fail closed: what they select is denied", () => {
  const rules = httpRbac(inbound(policy("example", "ext", {
    action: "CUSTOM",
    provider: { name: "opa" },
    rules: [{ to: [{ operation: { paths: ["/admin/*"] } }] }],
  })));
  assert.equal(rules[0].action, "DENY");
  assert.match(JSON.stringify(rules[0]), /\/admin\//);
});

Deno.test("On TCP chains, ALLOW rules that need HTTP match nothing and DENY rules deny more", () => {
  const push = new World().apply(
    ...envoyResources(),
    networking("ServiceEntry", "example", "db", {
      hosts: ["db.example.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: 5432, name: "tcp", protocol: "TCP" }],
      workloadSelector: { labels: { app: "db" } },
    }),
    networking("WorkloadEntry", "example", "db-1", { address: "10.0.5.1", labels: { app: "db" } }),
    policy("example", "http-only-allow", {
      rules: [{ to: [{ operation: { methods: ["GET"] } }] }, { from: [{ source: { namespaces: ["ops"] } }] }],
    }),
    policy("example", "deny-path", {
      action: "DENY",
      rules: [{ from: [{ source: { namespaces: ["guest"] } }], to: [{ operation: { paths: ["/x"] } }] }],
    }),
  ).push();
  const lds = run(envoyLdsGenerator, envoySidecar("example", "10.0.5.1", { app: "db" }), push);
  const chain = (lds.byName.get("virtualInbound")!.filter_chains as Obj[])
    .find((c) => String(c.name).startsWith("inbound|5432|"))!;
  const filters = chain.filters as Obj[];
  assert.deepEqual(filters.map((f) => f.name), [
    "envoy.filters.network.rbac",
    "envoy.filters.network.rbac",
    "envoy.filters.network.tcp_proxy",
  ]);
  const [deny, allow] = filters.slice(0, 2).map((f) => (f.typed_config as Obj).rules as Obj);
  assert.deepEqual(Object.keys(allow.policies as Obj), ["ns[example]-policy[http-only-allow]-rule[1]"]);
  const denyText = JSON.stringify(deny);
  assert.match(denyText, /ns\/guest/);
  assert.ok(
    !denyText.includes("/x"),
    "the path cannot be checked on TCP: the rule denies every guest connection",
  );
  const violations = validatePgvAny(lds.bytes.get("virtualInbound")!);
  assert.equal(violations.length, 0, formatPgvViolations(violations));
});
