import assert from "node:assert/strict";
import { ValidationReport } from "../validation/report.ts";
import { validatePeerAuthentication } from "./peer_authentication.ts";

const CTX = { namespace: "default", name: "pa" };

function validate(spec: unknown): ValidationReport {
  const report = new ValidationReport();
  validatePeerAuthentication(spec, report, CTX);
  return report;
}

function errors(spec: unknown): string[] {
  return validate(spec).errors.map((e) => `${e.path}: ${e.message}`);
}

function errorPaths(spec: unknown): string[] {
  return validate(spec).errors.map((e) => e.path);
}

Deno.test("PeerAuthentication accepts Istio 1.9's valid shapes", async (t) => {
  const valid: Record<string, unknown> = {
    "namespace-wide STRICT": { mtls: { mode: "STRICT" } },
    "workload PERMISSIVE with port-level STRICT": {
      selector: { matchLabels: { app: "httpbin", version: "v1" } },
      mtls: { mode: "PERMISSIVE" },
      portLevelMtls: { "8080": { mode: "STRICT" }, "9090": { mode: "DISABLE" } },
    },
    "every mode": {
      selector: { matchLabels: { app: "a" } },
      mtls: { mode: "DISABLE" },
      portLevelMtls: { 1: {}, 65535: { mode: "UNSET" } },
    },
    "a document without spec": undefined,
  };
  for (const [name, spec] of Object.entries(valid)) {
    await t.step(name, () => assert.deepEqual(errors(spec), []));
  }
});

Deno.test("PeerAuthentication rejects bad specs at the offending field", async (t) => {
  await t.step("unknown fields at every level", () => {
    assert.deepEqual(
      errorPaths({
        mtls: { mode: "STRICT", strict: true },
        selector: { labels: { app: "a" } },
        port_level_mtls: {},
      }),
      ["spec.port_level_mtls", "spec.selector.labels", "spec.mtls.strict"],
    );
  });
  await t.step("unknown mTLS mode, also per port", () => {
    assert.deepEqual(
      errors({
        selector: { matchLabels: { app: "a" } },
        mtls: { mode: "strict" },
        portLevelMtls: { "80": { mode: 2 } },
      }),
      [
        `spec.mtls.mode: must be one of UNSET, DISABLE, PERMISSIVE, STRICT, got string "strict"`,
        `spec.portLevelMtls["80"].mode: must be one of UNSET, DISABLE, PERMISSIVE, STRICT, got number 2`,
      ],
    );
  });
  await t.step("port-level mTLS needs a selector with labels", () => {
    assert.deepEqual(errorPaths({ portLevelMtls: { "8080": { mode: "STRICT" } } }), ["spec.portLevelMtls"]);
    assert.deepEqual(
      errorPaths({ selector: { matchLabels: {} }, portLevelMtls: { "8080": { mode: "STRICT" } } }),
      [
        "spec.portLevelMtls",
      ],
    );
  });
  await t.step("an empty port-level map is rejected", () => {
    assert.deepEqual(errors({ selector: { matchLabels: { app: "a" } }, portLevelMtls: {} }), [
      "spec.portLevelMtls: must have at least one port when present",
    ]);
  });
  await t.step("ports outside 1..65535 and non-numeric ports", () => {
    assert.deepEqual(
      errorPaths({
        selector: { matchLabels: { app: "a" } },
        portLevelMtls: {
          "0": { mode: "STRICT" },
          "65536": { mode: "STRICT" },
          http: { mode: "STRICT" },
          "443": null,
        },
      }),
      [
        'spec.portLevelMtls["0"]',
        'spec.portLevelMtls["443"]',
        'spec.portLevelMtls["65536"]',
        "spec.portLevelMtls.http",
      ],
    );
  });
  await t.step("selector wildcards and empty keys", () => {
    assert.deepEqual(errorPaths({ selector: { matchLabels: { app: "web*", "": "x" } } }), [
      "spec.selector.matchLabels.app",
      'spec.selector.matchLabels[""]',
    ]);
  });
  await t.step("wrong types", () => {
    assert.deepEqual(errors("STRICT"), [`spec: must be an object, got string "STRICT"`]);
    assert.deepEqual(errorPaths({ mtls: "STRICT", portLevelMtls: [] }), ["spec.mtls", "spec.portLevelMtls"]);
  });
});

Deno.test("PeerAuthentication warns when the policy has no effect", () => {
  const report = validate({ selector: { matchLabels: { app: "a" } }, mtls: {} });
  assert.deepEqual(report.errors, []);
  assert.deepEqual(report.warnings.map((w) => w.path), ["spec.mtls"]);
  assert.deepEqual(validate({ mtls: { mode: "STRICT" } }).warnings, []);
});
