import assert from "node:assert/strict";
import { ValidationReport } from "../validation/report.ts";
import { conditionKeyKind, validateCondition } from "./authorization_condition.ts";

function errors(condition: unknown): string[] {
  const report = new ValidationReport();
  validateCondition(report, "c", condition);
  return report.errors.map((e) => `${e.path}: ${e.message}`);
}

Deno.test("conditionKeyKind knows Istio 1.9's attributes", async (t) => {
  await t.step("supported keys and their value kinds", () => {
    const kinds: Record<string, string> = {
      "request.headers[x-token]": "string",
      "source.ip": "ip",
      "remote.ip": "ip",
      "source.namespace": "string",
      "source.principal": "string",
      "request.auth.principal": "string",
      "request.auth.audiences": "string",
      "request.auth.presenter": "string",
      "request.auth.claims[iss]": "string",
      "request.auth.claims[nested][claim]": "string",
      "destination.ip": "ip",
      "destination.port": "port",
      "connection.sni": "string",
      "experimental.envoy.filters.network.mysql_proxy[db.table]": "string",
    };
    for (const [key, kind] of Object.entries(kinds)) assert.deepEqual(conditionKeyKind(key), { kind }, key);
  });
  await t.step("malformed, retired and unknown keys", () => {
    const bad = [
      "request.headers",
      "request.headers[]",
      "request.headers[a][b]",
      "request.headersX[a]",
      "request.auth.claims",
      "request.auth.claims[iss",
      "experimental.envoy.filters.network",
      "destination.labels[version]",
      "destination.namespace",
      "destination.name",
      "destination.user",
      "Source.IP",
      "source.user",
    ];
    for (const key of bad) assert.ok("problem" in conditionKeyKind(key), key);
  });
});

Deno.test("validateCondition checks key, values and notValues", async (t) => {
  await t.step("the key is required", () => {
    assert.deepEqual(errors({ values: ["key is missing"] }), ["c.key: is required"]);
    assert.deepEqual(errors({ key: "", values: ["x"] }), ["c.key: is required"]);
  });
  await t.step("values or notValues are required", () => {
    assert.deepEqual(errors({ key: "source.ip" }), [
      `c: at least one of values or notValues must be set for key "source.ip"`,
    ]);
    assert.deepEqual(errors({ key: "source.ip", values: [], notValues: [] }).length, 1);
    assert.deepEqual(errors({ key: "source.ip", notValues: ["1.2.3.4"] }), []);
  });
  await t.step("values are checked for the key's kind", () => {
    assert.deepEqual(errors({ key: "destination.ip", values: ["1.2.3"], notValues: ["::1/129"] }), [
      `c.values[0]: "1.2.3" is not a valid IP address`,
      `c.notValues[0]: "::1/129" is not a valid CIDR block`,
    ]);
    assert.deepEqual(errors({ key: "destination.port", values: ["-1"] }), [
      `c.values[0]: must be a port number between 0 and 65535, got "-1"`,
    ]);
    assert.deepEqual(
      errors({ key: "connection.sni", values: ["*.example.com", "a.*.com"] }).map((e) => e.split(":")[0]),
      [
        "c.values[1]",
      ],
    );
  });
  await t.step("retired attributes say why", () => {
    assert.deepEqual(errors({ key: "destination.labels[app]", values: ["x"] }), [
      `c.key: attribute "destination.labels[app]" is replaced by the workload selector`,
    ]);
  });
});
