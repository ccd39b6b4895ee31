import fc from "fast-check";
import { loadEnvoySchema } from "../../proto/envoy_schema.ts";
import {
  admissionReviewProperty,
  configFileProperty,
  envSettingsProperty,
  meshConfigProperty,
  xdsRequestProperty,
} from "./fuzz_properties.ts";

// Short runs with a fixed seed keep `deno task test` quick and repeatable; `deno task bench` runs each
// property on 100 000 fresh inputs.
const RUNS = { numRuns: 300, seed: 20_240_601 };

Deno.test("Fuzzing: every config file text loads or is rejected with a reason", () => {
  fc.assert(configFileProperty(), RUNS);
});

Deno.test("Fuzzing: every mesh config text parses or throws MeshConfigError", () => {
  fc.assert(meshConfigProperty(), RUNS);
});

Deno.test("Fuzzing: every environment value is accepted or refused with InvalidEnvError", () => {
  fc.assert(envSettingsProperty(), RUNS);
});

Deno.test("Fuzzing: every AdmissionReview request is answered 200 with its uid or refused 4xx", async () => {
  await fc.assert(admissionReviewProperty(), RUNS);
});

Deno.test("Fuzzing: any bytes decode to an xDS request or throw TypeError", () => {
  fc.assert(xdsRequestProperty(loadEnvoySchema()), RUNS);
});
