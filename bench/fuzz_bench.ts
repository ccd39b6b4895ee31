/**
 * Long fuzz runs: each property of `tests/fuzz/fuzz_properties.ts` on 100 000 fresh inputs (a new seed
 * each run). A failure prints fast-check's shrunk counterexample and its seed, to replay in the test.
 *
 * @module
 */
import fc from "fast-check";
import { loadEnvoySchema } from "../proto/envoy_schema.ts";
import {
  admissionReviewProperty,
  configFileProperty,
  envSettingsProperty,
  meshConfigProperty,
  xdsRequestProperty,
} from "../tests/fuzz/fuzz_properties.ts";

const RUNS = { numRuns: 100_000 };
const once = { n: 1, warmup: 0, group: "fuzz" };
const root = loadEnvoySchema();

Deno.bench("fuzz: config files, 100k inputs", once, () => fc.assert(configFileProperty(), RUNS));
Deno.bench("fuzz: mesh config, 100k inputs", once, () => fc.assert(meshConfigProperty(), RUNS));
Deno.bench("fuzz: environment variables, 100k inputs", once, () => fc.assert(envSettingsProperty(), RUNS));
Deno.bench("fuzz: AdmissionReview handler, 100k inputs", once, async () => {
  await fc.assert(admissionReviewProperty(), RUNS);
});
Deno.bench("fuzz: xDS request decoder, 100k inputs", once, () => fc.assert(xdsRequestProperty(root), RUNS));
