import assert from "node:assert/strict";
import { admissionReviewResponse, parseAdmissionReview } from "./admission_review.ts";
import { admissionReview } from "./_test_support.ts";

Deno.test("parseAdmissionReview reads v1 and v1beta1 requests", async (t) => {
  for (const apiVersion of ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"]) {
    await t.step(apiVersion, () => {
      const review = parseAdmissionReview(admissionReview({ kind: "X" }, { apiVersion, uid: "u-1" }));
      assert.equal(review.apiVersion, apiVersion);
      assert.equal(review.request.uid, "u-1");
      assert.equal(review.request.operation, "CREATE");
      assert.equal(review.request.namespace, "bookinfo");
      assert.deepEqual(review.request.resource, {
        group: "networking.istio.io",
        version: "v1beta1",
        kind: undefined,
        resource: "virtualservices",
      });
      assert.deepEqual(review.request.object, { kind: "X" });
    });
  }
});

Deno.test("parseAdmissionReview says what is wrong with a body that is not an AdmissionReview", async (t) => {
  const valid = admissionReview({});
  const request = valid.request as Record<string, unknown>;
  const cases: [string, unknown, RegExp][] = [
    ["an array", [], /expected a JSON object/],
    [
      "another apiVersion",
      { ...valid, apiVersion: "admission.k8s.io/v2" },
      /Unsupported AdmissionReview apiVersion "admission.k8s.io\/v2"/,
    ],
    [
      "no apiVersion",
      { ...valid, apiVersion: undefined },
      /Unsupported AdmissionReview apiVersion undefined/,
    ],
    ["another kind", { ...valid, kind: "TokenReview" }, /kind is "TokenReview"/],
    ["no request", { ...valid, request: undefined }, /has no request object/],
    ["no uid", { ...valid, request: { ...request, uid: "" } }, /request.uid is missing/],
    ["no operation", { ...valid, request: { ...request, operation: 1 } }, /request.operation is missing/],
  ]; // deno-fmt-ignore
  for (const [name, body, message] of cases) {
    await t.step(name, () => assert.throws(() => parseAdmissionReview(body), { name: "TypeError", message }));
  }
});

Deno.test("admissionReviewResponse answers in the request's version with its uid", () => {
  const review = parseAdmissionReview(
    admissionReview({}, { apiVersion: "admission.k8s.io/v1beta1", uid: "abc" }),
  );
  assert.deepEqual(admissionReviewResponse(review, { allowed: false, status: { message: "no" } }), {
    apiVersion: "admission.k8s.io/v1beta1",
    kind: "AdmissionReview",
    response: { uid: "abc", allowed: false, status: { message: "no" } },
  });
});
