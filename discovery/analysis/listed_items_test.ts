import assert from "node:assert/strict";
import { listedItems, MAX_LISTED_ITEMS, renderTemplate } from "./analysis_message.ts";
import { AnalysisContext } from "./analyzer.ts";
import { CorpusInput } from "./_corpus_support.ts";
import { sidecarDefaultSelectorAnalyzer } from "./sidecar_default_selector_analyzer.ts";

Deno.test("A message names at most twenty items of a list and counts the rest", () => {
  const few = ["a", "b"];
  const many = Array.from({ length: 25 }, (_, i) => `s${i}`);
  assert.equal(renderTemplate("%v %q", [few, few]), '[a b] ["a" "b"]');
  assert.equal(listedItems(many.slice(0, MAX_LISTED_ITEMS), ","), many.slice(0, 20).join(","));
  assert.equal(
    renderTemplate("%v", [many]),
    `[${many.slice(0, 20).join(" ")} … (25 in all)]`,
  );
  assert.equal(
    renderTemplate("%q", [many]),
    `[${many.slice(0, 20).map((s) => `"${s}"`).join(" ")} … (25 in all)]`,
  );
});

Deno.test("5,000 Sidecars without a selector in one namespace make 5,000 messages of a bounded size, not of every name", () => {
  // Each message named the whole group: 10,000 Sidecars were 10,000 messages of 10,000 names, a gigabyte.
  const sidecars = Array.from({ length: 5_000 }, (_, i) => `
apiVersion: networking.mesh.io/v1beta1
kind: Sidecar
metadata: {name: sidecar-${i}, namespace: crowded}
spec:
  egress: [{hosts: ["./*"]}]
`).join("\n---\n");
  const input = new CorpusInput().addYaml(sidecars).input({
    rootNamespace: "mesh-system",
    systemNamespace: "mesh-system",
  });
  const ctx = new AnalysisContext(input);
  for (const _ of sidecarDefaultSelectorAnalyzer.analyze(ctx)) { /* every step */ }
  const messages = ctx.messages();
  assert.equal(messages.length, 5_000);
  assert.equal(
    messages[0].text,
    `The Sidecars [${Array.from({ length: 20 }, (_, i) => `sidecar-${i}`).join(" ")} … (5000 in all)] in ` +
      `namespace "crowded" have no workload selector, which can lead to undefined behavior.`,
  );
});
