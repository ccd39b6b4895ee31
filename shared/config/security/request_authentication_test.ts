import assert from "node:assert/strict";
import { ValidationReport } from "../validation/report.ts";
import { validateRequestAuthentication } from "./request_authentication.ts";

const CTX = { namespace: "default", name: "ra" };
const RSA_JWKS = JSON.stringify({ keys: [{ kty: "RSA", kid: "k1", n: "0vx7agoebGcQSuu", e: "AQAB" }] });

function validate(spec: unknown): ValidationReport {
  const report = new ValidationReport();
  validateRequestAuthentication(spec, report, CTX);
  return report;
}

function errors(spec: unknown): string[] {
  return validate(spec).errors.map((e) => `${e.path}: ${e.message}`);
}

function errorPaths(spec: unknown): string[] {
  return validate(spec).errors.map((e) => e.path);
}

function rule(fields: Record<string, unknown>): unknown {
  return { selector: { matchLabels: { app: "httpbin" } }, jwtRules: [{ issuer: "example.com", ...fields }] };
}

Deno.test("RequestAuthentication accepts Istio 1.9's valid JWT rules", async (t) => {
  const valid: Record<string, unknown> = {
    "issuer only (keys from OpenID discovery)": rule({}),
    "every field": rule({
      audiences: ["bookstore.example.com", "api"],
      jwksUri: "https://example.com:8443/.well-known/jwks.json",
      fromHeaders: [{ name: "x-jwt-assertion", prefix: "Bearer " }, { name: "Authorization" }],
      fromParams: ["token"],
      outputPayloadToHeader: "x-jwt-payload",
      forwardOriginalToken: true,
    }),
    "inline JWKS": rule({ jwks: RSA_JWKS }),
    "http jwksUri with IPv6 host and upper-case scheme": rule({ jwksUri: "HTTP://[fd00::1]:8080/keys" }),
    "several issuers": { jwtRules: [{ issuer: "a" }, { issuer: "b", jwksUri: "http://jwks.svc/keys" }] },
  };
  for (const [name, spec] of Object.entries(valid)) {
    await t.step(name, () => assert.deepEqual(errors(spec), []));
  }
});

Deno.test("RequestAuthentication rejects bad JWT rules at the offending field", async (t) => {
  await t.step("issuer is required", () => {
    assert.deepEqual(errors({ jwtRules: [{ issuer: "" }, { audiences: ["a"] }] }), [
      "spec.jwtRules[0].issuer: is required",
      "spec.jwtRules[1].issuer: is required",
    ]);
  });
  await t.step("unknown fields, including snake_case names", () => {
    assert.deepEqual(errorPaths(rule({ jwks_uri: "https://a/k", timeout: "5s" })), [
      "spec.jwtRules[0].jwks_uri",
      "spec.jwtRules[0].timeout",
    ]);
    assert.deepEqual(errorPaths({ jwtRules: [], rules: [] }), ["spec.rules"]);
  });
  await t.step("jwksUri must be an http(s) URL with a host and a valid port", () => {
    const bad = [
      "ftp://example.com/keys",
      "https:///keys",
      "https://:443/keys",
      "https://a:0/k",
      "https://a:70000/k",
      "example.com/keys",
      "https://exa mple.com/k",
    ];
    for (const uri of bad) {
      assert.deepEqual(errorPaths(rule({ jwksUri: uri })), ["spec.jwtRules[0].jwksUri"], uri);
    }
  });
  await t.step("inline jwks must be a parsable JWKS", () => {
    assert.deepEqual(errorPaths(rule({ jwks: "{not json" })), ["spec.jwtRules[0].jwks"]);
    assert.deepEqual(errors(rule({ jwks: JSON.stringify({ keys: [{ kty: "RSA", n: "abc" }] }) })), [
      `spec.jwtRules[0].jwks: JWKS keys[0]: RSA key needs "e", got undefined undefined`,
    ]);
  });
  await t.step("fromHeaders need a valid name", () => {
    assert.deepEqual(
      errors(
        rule({
          fromHeaders: [{ prefix: "Bearer " }, { name: "" }, { name: "bad header" }, {
            name: "x",
            query: "y",
          }],
        }),
      ),
      [
        "spec.jwtRules[0].fromHeaders[0].name: is required",
        "spec.jwtRules[0].fromHeaders[1].name: header name cannot be empty",
        `spec.jwtRules[0].fromHeaders[2].name: header name "bad header" is not a valid HTTP header name`,
        `spec.jwtRules[0].fromHeaders[3].query: unknown field "query"; expected one of name, prefix`,
      ],
    );
  });
  await t.step("audiences and fromParams must be non-empty strings", () => {
    assert.deepEqual(errorPaths(rule({ audiences: ["a", ""], fromParams: ["", 3] })), [
      "spec.jwtRules[0].audiences[1]",
      "spec.jwtRules[0].fromParams[0]",
      "spec.jwtRules[0].fromParams[1]",
    ]);
  });
  await t.step("outputPayloadToHeader must be a settable header, forwardOriginalToken a boolean", () => {
    assert.deepEqual(errorPaths(rule({ outputPayloadToHeader: ":path", forwardOriginalToken: "yes" })), [
      "spec.jwtRules[0].outputPayloadToHeader",
      "spec.jwtRules[0].forwardOriginalToken",
    ]);
  });
  await t.step("selector rules apply", () => {
    assert.deepEqual(errorPaths({ selector: { matchLabels: { "*": "a" } }, jwtRules: [{ issuer: "a" }] }), [
      'spec.selector.matchLabels["*"]',
    ]);
  });
});

Deno.test("RequestAuthentication warns about suspicious but valid rules", async (t) => {
  await t.step("no JWT rules", () => {
    const report = validate({ selector: { matchLabels: { app: "a" } } });
    assert.deepEqual(report.errors, []);
    assert.deepEqual(report.warnings.map((w) => w.path), ["spec.jwtRules"]);
  });
  await t.step("jwksUri next to inline jwks is ignored", () => {
    const report = validate(rule({ jwks: RSA_JWKS, jwksUri: "https://example.com/keys" }));
    assert.deepEqual(report.errors, []);
    assert.deepEqual(report.warnings.map((w) => w.path), ["spec.jwtRules[0].jwksUri"]);
  });
  await t.step("an inline JWKS without keys", () => {
    const report = validate(rule({ jwks: '{"keys": []}' }));
    assert.deepEqual(report.errors, []);
    assert.deepEqual(report.warnings.map((w) => w.path), ["spec.jwtRules[0].jwks"]);
  });
});
