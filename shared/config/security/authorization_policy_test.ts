import assert from "node:assert/strict";
import { ValidationReport } from "../validation/report.ts";
import { validateAuthorizationPolicy } from "./authorization_policy.ts";

const CTX = { namespace: "foo", name: "ap" };

function validate(spec: unknown): ValidationReport {
  const report = new ValidationReport();
  validateAuthorizationPolicy(spec, report, CTX);
  return report;
}

function errors(spec: unknown): string[] {
  return validate(spec).errors.map((e) => `${e.path}: ${e.message}`);
}

function errorPaths(spec: unknown): string[] {
  return validate(spec).errors.map((e) => e.path);
}

function warningPaths(spec: unknown): string[] {
  return validate(spec).warnings.map((w) => w.path);
}

Deno.test("AuthorizationPolicy accepts Istio 1.9's valid policies", async (t) => {
  const valid: Record<string, unknown> = {
    "deny-all: ALLOW without rules": {},
    "allow-all: one empty rule": { rules: [{}] },
    "document without spec": null,
    "full ALLOW rule": {
      selector: { matchLabels: { app: "httpbin", version: "v1" } },
      action: "ALLOW",
      rules: [{
        from: [
          { source: { principals: ["cluster.local/ns/default/sa/sleep"], notRequestPrincipals: ["*"] } },
          { source: { namespaces: ["test", "prod-*"], ipBlocks: ["10.0.0.0/8", "192.168.1.1"] } },
          { source: { remoteIpBlocks: ["2001:db8::/32"], notRemoteIpBlocks: ["2001:db8::1"] } },
        ],
        to: [{
          operation: { methods: ["GET", "HEAD"], paths: ["/info*", "*/health"], hosts: ["*.example.com"] },
        }, {
          operation: { ports: ["8080"], notPaths: ["/admin"] },
        }],
        when: [
          { key: "request.auth.claims[iss]", values: ["https://accounts.google.com"] },
          { key: "request.headers[User-Agent]", notValues: ["curl*"] },
          { key: "source.ip", values: ["10.1.2.3", "10.2.0.0/16"] },
          { key: "destination.port", values: ["443"] },
          { key: "request.auth.claims[groups][admin]", values: ["true"] },
          { key: "experimental.envoy.filters.network.mysql_proxy[db.table]", values: ["[update]"] },
        ],
      }],
    },
    "DENY with a port-scoped rule": {
      action: "DENY",
      rules: [{ to: [{ operation: { ports: ["9000"], methods: ["POST"] } }] }],
    },
    "AUDIT with rules": { action: "AUDIT", rules: [{ to: [{ operation: { paths: ["/audit"] } }] }] },
    "CUSTOM with a provider": {
      action: "CUSTOM",
      provider: { name: "ext-authz" },
      rules: [{
        to: [{ operation: { paths: ["/admin*"] } }],
        when: [{ key: "source.ip", values: ["1.2.3.4"] }],
      }],
    },
  };
  for (const [name, spec] of Object.entries(valid)) {
    await t.step(name, () => assert.deepEqual(errors(spec), []));
  }
});

Deno.test("AuthorizationPolicy rejects bad actions and providers", async (t) => {
  await t.step("unknown action", () => {
    assert.deepEqual(errors({ action: "REJECT", rules: [{}] }), [
      `spec.action: must be one of ALLOW, DENY, AUDIT, CUSTOM, got string "REJECT"`,
    ]);
  });
  await t.step("DENY and CUSTOM need rules", () => {
    assert.deepEqual(errorPaths({ action: "DENY" }), ["spec.rules"]);
    assert.deepEqual(errorPaths({ action: "CUSTOM", provider: { name: "ext" } }), ["spec.rules"]);
  });
  await t.step("CUSTOM needs a named provider", () => {
    assert.deepEqual(errorPaths({ action: "CUSTOM", rules: [{}] }), ["spec.provider"]);
    assert.deepEqual(errorPaths({ action: "CUSTOM", provider: {}, rules: [{}] }), ["spec.provider.name"]);
    assert.deepEqual(errorPaths({ action: "CUSTOM", provider: { name: "x", port: 1 }, rules: [{}] }), [
      "spec.provider.port",
    ]);
  });
  await t.step("provider only with CUSTOM", () => {
    assert.deepEqual(errors({ action: "DENY", provider: { name: "ext" }, rules: [{}] }), [
      `spec.provider: is only allowed with the CUSTOM action, got action "DENY"`,
    ]);
    assert.deepEqual(errorPaths({ provider: { name: "ext" } }), ["spec.provider"]);
  });
  await t.step("CUSTOM cannot use identities the external authorizer is not given", () => {
    assert.deepEqual(
      errorPaths({
        action: "CUSTOM",
        provider: { name: "ext" },
        rules: [{
          from: [{ source: { principals: ["a"], ipBlocks: ["1.2.3.4"], notNamespaces: ["b"] } }],
          when: [{ key: "request.auth.claims[iss]", values: ["x"] }, {
            key: "source.namespace",
            values: ["n"],
          }],
        }],
      }),
      [
        "spec.rules[0].from[0].source.notNamespaces",
        "spec.rules[0].from[0].source.principals",
        "spec.rules[0].when[0].key",
        "spec.rules[0].when[1].key",
      ],
    );
  });
});

Deno.test("AuthorizationPolicy rejects bad rules at the offending field", async (t) => {
  await t.step("unknown fields at every level", () => {
    assert.deepEqual(
      errorPaths({
        rules: [{
          from: [{ source: { principals: ["a"], ip_blocks: ["1.2.3.4"] }, extra: 1 }],
          to: [{ operation: { method: ["GET"], paths: ["/"] } }],
          when: [{ key: "source.ip", values: ["1.2.3.4"], value: "x" }],
          unless: [],
        }],
      }),
      [
        "spec.rules[0].unless",
        "spec.rules[0].from[0].extra",
        "spec.rules[0].from[0].source.ip_blocks",
        "spec.rules[0].to[0].operation.method",
        "spec.rules[0].when[0].value",
      ],
    );
  });
  await t.step("empty from/to lists and empty source/operation", () => {
    assert.deepEqual(errorPaths({ rules: [{ from: [], to: [] }] }), [
      "spec.rules[0].from",
      "spec.rules[0].to",
    ]);
    assert.deepEqual(
      errorPaths({ rules: [{ from: [{}, { source: {} }], to: [{ operation: { paths: [] } }, null] }] }),
      [
        "spec.rules[0].from[0].source",
        "spec.rules[0].from[1].source",
        "spec.rules[0].to[0].operation",
        "spec.rules[0].to[1]",
      ],
    );
  });
  await t.step("IP blocks must be IPs or CIDRs", () => {
    assert.deepEqual(
      errors({
        rules: [{
          from: [{}, { source: { ipBlocks: ["10.0.0.0/33", "1.2.3.4"], notRemoteIpBlocks: ["host"] } }],
        }],
      })
        .filter((e) => e.includes("Blocks")),
      [
        `spec.rules[0].from[1].source.ipBlocks[0]: "10.0.0.0/33" is not a valid CIDR block`,
        `spec.rules[0].from[1].source.notRemoteIpBlocks[0]: "host" is not a valid IP address`,
      ],
    );
  });
  await t.step("ports are decimal strings up to 65535", () => {
    assert.deepEqual(
      errors({ rules: [{ to: [{ operation: { ports: [8080, "65536", "http", "443"] } }] }] }),
      [
        `spec.rules[0].to[0].operation.ports[0]: must be a string, got number 8080; quote port numbers, e.g. "8080"`,
        `spec.rules[0].to[0].operation.ports[1]: must be a port number between 0 and 65535, got "65536"`,
        `spec.rules[0].to[0].operation.ports[2]: must be a port number between 0 and 65535, got "http"`,
      ],
    );
  });
  await t.step("empty values are not allowed", () => {
    assert.deepEqual(
      errorPaths({
        rules: [{ from: [{ source: { principals: [""] } }], to: [{ operation: { hosts: ["a", ""] } }] }],
      }),
      [
        "spec.rules[0].from[0].source.principals[0]",
        "spec.rules[0].to[0].operation.hosts[1]",
      ],
    );
  });
  await t.step("a wildcard only alone, first or last", () => {
    assert.deepEqual(
      errorPaths({
        rules: [{
          from: [{ source: { principals: ["cluster.local/ns/*/sa/x"], namespaces: ["*", "*a*"] } }],
          to: [{ operation: { paths: ["/a/*/b", "**"], methods: ["G*T"] } }],
          when: [{ key: "request.headers[x-a]", values: ["a*b"] }],
        }],
      }),
      [
        "spec.rules[0].from[0].source.principals[0]",
        "spec.rules[0].from[0].source.namespaces[1]",
        "spec.rules[0].to[0].operation.methods[0]",
        "spec.rules[0].to[0].operation.paths[0]",
        "spec.rules[0].to[0].operation.paths[1]",
        "spec.rules[0].when[0].values[0]",
      ],
    );
  });
  await t.step("rules must be objects in a list", () => {
    assert.deepEqual(errorPaths({ rules: {} }), ["spec.rules"]);
    assert.deepEqual(errorPaths({ rules: [null, "x"] }), ["spec.rules[0]", "spec.rules[1]"]);
  });
  await t.step("selector wildcards", () => {
    assert.deepEqual(errorPaths({ selector: { matchLabels: { app: "*" } } }), [
      "spec.selector.matchLabels.app",
    ]);
  });
});

Deno.test("AuthorizationPolicy warns about valid but suspicious policies", async (t) => {
  await t.step("DENY or CUSTOM with an empty rules list never triggers", () => {
    assert.deepEqual(errors({ action: "DENY", rules: [] }), []);
    assert.deepEqual(warningPaths({ action: "DENY", rules: [] }), ["spec.rules"]);
    assert.deepEqual(warningPaths({ action: "CUSTOM", provider: { name: "x" }, rules: [] }), ["spec.rules"]);
  });
  await t.step("AUDIT without rules never triggers", () => {
    assert.deepEqual(errors({ action: "AUDIT" }), []);
    assert.deepEqual(warningPaths({ action: "AUDIT" }), ["spec.rules"]);
  });
  await t.step("ALLOW without rules is the deny-all idiom, not a warning", () => {
    assert.deepEqual(warningPaths({}), []);
    assert.deepEqual(warningPaths({ rules: [] }), []);
  });
  await t.step("DENY with HTTP-only fields and no ports widens on TCP", () => {
    const spec = {
      action: "DENY",
      rules: [{
        from: [{ source: { requestPrincipals: ["*"] } }],
        to: [{ operation: { methods: ["POST"] } }],
      }],
    };
    assert.deepEqual(errors(spec), []);
    assert.deepEqual(warningPaths(spec), ["spec.rules[0]"]);
    const scoped = {
      action: "DENY",
      rules: [{
        when: [{ key: "request.headers[x]", values: ["1"] }, { key: "destination.port", values: ["80"] }],
      }],
    };
    assert.deepEqual(warningPaths(scoped), []);
  });
  await t.step("values that can never match", () => {
    const spec = {
      rules: [{
        from: [{ source: { namespaces: ["Bad_NS"] } }],
        to: [{ operation: { methods: ["get"], paths: ["api"], ports: ["0"] } }],
      }],
    };
    assert.deepEqual(errors(spec), []);
    assert.deepEqual(warningPaths(spec), [
      "spec.rules[0].from[0].source.namespaces[0]",
      "spec.rules[0].to[0].operation.ports[0]",
      "spec.rules[0].to[0].operation.methods[0]",
      "spec.rules[0].to[0].operation.paths[0]",
    ]);
  });
});
