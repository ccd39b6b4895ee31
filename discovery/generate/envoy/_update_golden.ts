/**
 * Rewrites the golden files of the Envoy generators (`deno task golden:update`) after an intended change.
 *
 * @module
 */
import { GOLDEN_FILES, goldenDocuments } from "./_golden_config.ts";

if (import.meta.main) {
  const documents = goldenDocuments();
  for (const [name, file] of Object.entries(GOLDEN_FILES) as [keyof typeof GOLDEN_FILES, string][]) {
    await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(file, documents[name]);
    console.log(`wrote ${file}`);
  }
}
