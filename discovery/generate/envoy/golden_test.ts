import assert from "node:assert/strict";
import { GOLDEN_FILES, goldenDocuments } from "./_golden_config.ts";

Deno.test("Envoy configuration of a representative sidecar and gateway matches the golden files", async (t) => {
  const documents = goldenDocuments();
  for (const [name, file] of Object.entries(GOLDEN_FILES) as [keyof typeof GOLDEN_FILES, string][]) {
    await t.step(name, async () => {
      const expected = await Deno.readTextFile(file);
      assert.equal(
        documents[name],
        expected,
        `${file} differs from what the generators make; if the change is intended, run deno task golden:update`,
      );
    });
  }
});
