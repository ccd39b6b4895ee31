import assert from "node:assert/strict";
import type { AdmissionRequest } from "./admission_review.ts";
import { FAILURE_REASON, validateAdmissionRequest } from "./validate_admission.ts";
import { INVALID_SPEC, INVALID_SPEC_ERROR_PATHS, VALID_SPEC, virtualService } from "./_test_support.ts";

function request(
  object: unknown,
  operation = "CREATE",
  extra: Partial<AdmissionRequest> = {},
): AdmissionRequest {
  return { uid: "u", operation, namespace: "bookinfo", object, ...extra };
}

Deno.test("validateAdmissionRequest admits valid mesh resources", async (t) => {
  await t.step("a weighted VirtualService in Istio's group", () => {
    const decision = validateAdmissionRequest(request(virtualService(VALID_SPEC)));
    assert.deepEqual(decision.response, { allowed: true });
    assert.deepEqual(decision.outcome, { result: "passed" });
    assert.deepEqual(decision.target, {
      group: "networking.istio.io",
      version: "v1beta1",
      resource: "virtualservices",
    });
  });
  await t.step("an UPDATE is checked like a CREATE", () => {
    assert.equal(
      validateAdmissionRequest(request(virtualService(INVALID_SPEC), "UPDATE")).response.allowed,
      false,
    );
  });
  await t.step("warnings of a valid resource are returned to the user", () => {
    const spec = {
      hosts: ["reviews"],
      http: [{
        route: [{ destination: { host: "reviews" } }],
        mirror: { host: "shadow" },
        mirrorPercent: 50,
      }],
    };
    const decision = validateAdmissionRequest(request(virtualService(spec)));
    assert.equal(decision.response.allowed, true);
    assert.deepEqual(decision.response.warnings, [
      "spec.http[0].mirrorPercent: mirrorPercent is deprecated; use mirrorPercentage",
    ]);
  }); // deno-fmt-ignore
  await t.step("without metadata.namespace the request's namespace is used", () => {
    const object = { ...virtualService(INVALID_SPEC), metadata: { name: "reviews" } };
    const decision = validateAdmissionRequest(request(object, "CREATE", { namespace: "prod" }));
    assert.match(decision.response.status!.message, /^VirtualService prod\/reviews is invalid/);
  });
});

Deno.test("validateAdmissionRequest denies invalid mesh resources with every error", async (t) => {
  await t.step("all four errors are named with their field paths", () => {
    const decision = validateAdmissionRequest(request(virtualService(INVALID_SPEC)));
    assert.equal(decision.response.allowed, false);
    const message = decision.response.status!.message;
    assert.match(message, /^VirtualService bookinfo\/reviews is invalid \(4 errors\): /);
    for (const path of INVALID_SPEC_ERROR_PATHS) {
      assert.ok(message.includes(`${path}: `), `${path} in ${message}`);
    }
    assert.match(message, /spec\.http\[0\]\.route\[1\]\.weight: weight must be between 0 and 100, got -5/);
    assert.deepEqual(decision.outcome, { result: "failed", reason: FAILURE_REASON.invalidConfig });
  });
  await t.step("an unknown top-level field", () => {
    const decision = validateAdmissionRequest(request(virtualService(VALID_SPEC, { spek: {} })));
    assert.equal(decision.response.allowed, false);
    assert.match(decision.response.status!.message, /\(1 error\): spek: unknown field "spek"/);
    assert.deepEqual(decision.outcome, { result: "failed", reason: "invalid_config" });
  });
  await t.step("a kind the mesh does not serve in its own group", () => {
    const object = {
      apiVersion: "networking.mesh.io/v1alpha3",
      kind: "TrafficSplit",
      metadata: { name: "s" },
    };
    const decision = validateAdmissionRequest(request(object));
    assert.equal(decision.response.allowed, false);
    assert.match(
      decision.response.status!.message,
      /^TrafficSplit bookinfo\/s: unrecognized kind "TrafficSplit" in API group "networking.mesh.io"; the mesh serves VirtualService, /,
    );
    assert.deepEqual(decision.outcome, { result: "failed", reason: "unknown_type" });
  });
  await t.step("a known kind in a version it is not served in", () => {
    const object = { ...virtualService(VALID_SPEC), apiVersion: "networking.istio.io/v2" };
    assert.match(
      validateAdmissionRequest(request(object)).response.status!.message,
      /not served in version "v2"/,
    );
  });
  await t.step("a missing object", () => {
    const decision = validateAdmissionRequest(request(undefined));
    assert.equal(decision.response.allowed, false);
    assert.deepEqual(decision.outcome, { result: "failed", reason: "yaml_decode_error" });
  });
});

Deno.test("validateAdmissionRequest lets through what it does not check", async (t) => {
  for (const operation of ["DELETE", "CONNECT"]) {
    await t.step(`${operation} is allowed unchecked, counted as an unsupported operation`, () => {
      const decision = validateAdmissionRequest(request(virtualService(INVALID_SPEC), operation));
      assert.deepEqual(decision.response, { allowed: true });
      assert.deepEqual(decision.outcome, { result: "failed", reason: "unsupported_operation" });
    });
  }
  for (const apiVersion of ["apps/v1", "v1", "gateway.networking.k8s.io/v1beta1"]) {
    await t.step(`an object of "${apiVersion}" is denied: the webhook fails closed`, () => {
      const decision = validateAdmissionRequest(
        request({ apiVersion, kind: "Thing", metadata: { name: "x" }, junk: 1 }),
      );
      assert.equal(decision.response.allowed, false);
      assert.deepEqual(decision.outcome, { result: "failed", reason: "unknown_type" });
    });
  }
});

Deno.test("validateAdmissionRequest never echoes a padded object back at its own size", async (t) => {
  await t.step("thousands of unknown fields give one bounded message", () => {
    const spec: Record<string, unknown> = { hosts: ["reviews"] };
    for (let i = 0; i < 5000; i++) spec[`padding${i}${"x".repeat(200)}`] = "y".repeat(500);
    const decision = validateAdmissionRequest(request(virtualService(spec)));
    const message = decision.response.status?.message ?? "";
    assert.equal(decision.response.allowed, false);
    assert.match(message, /\(500\d errors\)/);
    assert.match(message, /… and 499\d more$/);
    assert.ok(message.length < 5_000, `message of ${message.length} characters`);
  });
  await t.step("a huge name or kind is quoted as a short excerpt", () => {
    const object = { ...virtualService(VALID_SPEC), kind: "K".repeat(100_000) };
    const decision = validateAdmissionRequest(request(object));
    assert.ok(decision.subject.length < 200, decision.subject);
    assert.ok((decision.response.status?.message ?? "").length < 1_000);
  });
  await t.step("objects the mesh does not serve share one set of metric labels", () => {
    for (const group of ["a.example", "b.example"]) {
      const decision = validateAdmissionRequest(
        request({ apiVersion: `${group}/v1`, kind: "Thing", metadata: { name: "x" } }, "CREATE", {
          resource: { group, version: "v1", resource: `things-${group}` },
        }),
      );
      assert.deepEqual(decision.target, { group: "other", version: "other", resource: "other" });
    }
  });
});
