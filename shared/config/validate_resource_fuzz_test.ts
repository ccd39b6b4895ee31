import assert from "node:assert/strict";
import fc from "fast-check";
import { parseAllDocuments } from "yaml";
import { parseResource } from "./validate_resource.ts";
import { placesOf, replacedAt } from "../testing/json_places.ts";

/** Istio 1.9.9's validation dataset (provenance and licence: tests/fixtures/istio-1.9-validation/README.md). */
const CORPUS = new URL("../../tests/fixtures/istio-1.9-validation/", import.meta.url);

function corpusDocuments(): unknown[] {
  const docs: unknown[] = [];
  for (const entry of Deno.readDirSync(CORPUS)) {
    if (!entry.name.endsWith(".yaml")) continue;
    for (const doc of parseAllDocuments(Deno.readTextFileSync(new URL(entry.name, CORPUS)))) {
      const value = doc.toJSON();
      if (value !== null && typeof value === "object") docs.push(value);
    }
  }
  return docs;
}

Deno.test("No document made by replacing parts of the validation corpus's resources makes a validator throw", () => {
  // A validator that throws refuses its document with "could not be validated"; before that guard, it threw at
  // the webhook, the config directory and the orchestrator's watch (a Gateway port protocol that was a list).
  const docs = corpusDocuments();
  assert.ok(docs.length >= 30, `the corpus has ${docs.length} documents`);
  fc.assert(
    fc.property(
      fc.nat(),
      fc.array(fc.tuple(fc.nat(), fc.anything({ maxDepth: 3 })), { minLength: 1, maxLength: 3 }),
      (pick, edits) => {
        const doc = docs[pick % docs.length];
        const places = placesOf(doc).slice(1);
        let mutated = doc;
        for (const [place, replacement] of edits) {
          mutated = replacedAt(mutated, places[place % places.length], replacement);
        }
        const text = JSON.stringify(mutated);
        if (text === undefined) return;
        const { report } = parseResource(JSON.parse(text), { file: "fuzz.yaml", line: 1 });
        const thrown = report.errors.find((e) => e.message.startsWith("could not be validated"));
        assert.equal(thrown, undefined, `${thrown?.message} for ${text.slice(0, 300)}`);
      },
    ),
    { numRuns: 20_000 },
  );
});
