import assert from "node:assert/strict";
import { ValidationReport } from "./report.ts";
import { workloadSelectorAt } from "./selector.ts";

function run(value: unknown, field: "labels" | "matchLabels", requireLabels: boolean) {
  const report = new ValidationReport();
  const labels = workloadSelectorAt(report, "spec.selector", value, { field, requireLabels });
  return { labels, errors: report.errors.map((e) => e.path), warnings: report.warnings.map((w) => w.path) };
}

Deno.test("workloadSelectorAt validates selector labels", async (t) => {
  await t.step("valid selectors return their labels; absent is undefined", () => {
    assert.deepEqual(run({ matchLabels: { app: "a" } }, "matchLabels", true), {
      labels: { app: "a" },
      errors: [],
      warnings: [],
    });
    assert.deepEqual(run(undefined, "labels", true), { labels: undefined, errors: [], warnings: [] });
  });
  await t.step("wildcards and empty keys are errors; odd syntax a warning", () => {
    assert.deepEqual(run({ labels: { app: "a*" } }, "labels", true).errors, ["spec.selector.labels.app"]);
    assert.deepEqual(run({ labels: { "": "a" } }, "labels", true).errors, ['spec.selector.labels[""]']);
    assert.deepEqual(run({ labels: { app: "a b" } }, "labels", true).warnings, ["spec.selector.labels.app"]);
  });
  await t.step("empty selectors: an error or a warning, as asked; wrong field names are errors", () => {
    assert.deepEqual(run({ labels: null }, "labels", true).errors, ["spec.selector.labels"]);
    assert.deepEqual(run({}, "matchLabels", false).warnings, ["spec.selector.matchLabels"]);
    assert.deepEqual(run({ labels: { a: "b" } }, "matchLabels", false).errors, ["spec.selector.labels"]);
  });
});
