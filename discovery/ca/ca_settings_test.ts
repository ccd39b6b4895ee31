import assert from "node:assert/strict";
import { EnvSettings } from "@mesh/shared/env/env_settings";
import { caSettingsFromEnv } from "./ca_settings.ts";

Deno.test("The CA accepts tokens for AUDIENCE beside TOKEN_AUDIENCES", () => {
  const env = new EnvSettings("discovery", { TOKEN_AUDIENCES: "mesh-ca, other", AUDIENCE: "issuer-aud" });
  assert.deepEqual(caSettingsFromEnv(env).audiences, ["mesh-ca", "other", "issuer-aud"]);
  assert.deepEqual(caSettingsFromEnv(new EnvSettings("discovery", {})).audiences, ["mesh-ca"]);
});
