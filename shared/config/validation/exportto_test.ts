import assert from "node:assert/strict";
import { ValidationReport } from "./report.ts";
import { exportToAt } from "./exportto.ts";

function errors(value: unknown, allowNone = false): string[] {
  const report = new ValidationReport();
  exportToAt(report, "spec.exportTo", value, { namespace: "prod", allowNone });
  return report.errors.map((e) => e.path);
}

Deno.test("exportToAt accepts ., *, namespaces and (for service entries) ~", () => {
  assert.deepEqual(errors(["."]), []);
  assert.deepEqual(errors(["*"]), []);
  assert.deepEqual(errors([".", "istio-system", "other"]), []);
  assert.deepEqual(errors(["~"], true), []);
  assert.deepEqual(errors(undefined), []);
});

Deno.test("exportToAt rejects duplicates, mixing and bad names", () => {
  assert.deepEqual(errors([".", "prod"]), ["spec.exportTo[1]"]);
  assert.deepEqual(errors(["a", "a"]), ["spec.exportTo[1]"]);
  assert.deepEqual(errors(["*", "a"]), ["spec.exportTo"]);
  assert.deepEqual(errors(["~", "a"], true), ["spec.exportTo"]);
  assert.deepEqual(errors(["~"]), ["spec.exportTo[0]"]);
  assert.deepEqual(errors(["Bad_NS"]), ["spec.exportTo[0]"]);
  assert.deepEqual(errors("."), ["spec.exportTo"]);
});
