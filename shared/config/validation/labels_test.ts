import assert from "node:assert/strict";
import { ValidationReport } from "./report.ts";
import {
  checkLabelKey,
  checkLabelValue,
  isDnsLabel,
  isDnsSubdomain,
  isLowercaseDnsLabel,
  labelsAt,
} from "./labels.ts";

Deno.test("DNS label and subdomain checks", () => {
  assert.ok(
    isDnsLabel("v1") && isDnsLabel("Canary-2") && !isDnsLabel("v1.0") && !isDnsLabel("-a") &&
      !isDnsLabel("a".repeat(64)),
  );
  assert.ok(isLowercaseDnsLabel("istio-system") && !isLowercaseDnsLabel("Istio"));
  assert.ok(
    isDnsSubdomain("reviews.v1") && !isDnsSubdomain("Reviews") && !isDnsSubdomain("") &&
      !isDnsSubdomain("a..b"),
  );
});

Deno.test("label keys and values follow the orchestrator's syntax", () => {
  for (const ok of ["app", "app.kubernetes.io/name", "a_b.c-d", "Example.com/Tier"]) {
    assert.equal(checkLabelKey(ok), undefined, ok);
  }
  for (const bad of ["", ".", "/name", "a/b/c", "-app", "app-", "x/" + "n".repeat(64)]) {
    assert.ok(checkLabelKey(bad), bad);
  }
  for (const ok of ["", "v1", "1.3.4", "A_b-c.d"]) assert.equal(checkLabelValue(ok), undefined, ok);
  for (const bad of ["~", "a b", "-v1", "v".repeat(64)]) assert.ok(checkLabelValue(bad), bad);
});

Deno.test("labelsAt reports each bad entry at its key", () => {
  const report = new ValidationReport();
  labelsAt(report, "spec.labels", { app: "ok", "app.kubernetes.io/name": "bad value", n: 1 });
  assert.deepEqual(report.errors.map((e) => e.path), [
    "spec.labels.n",
    'spec.labels["app.kubernetes.io/name"]',
  ]);
});
