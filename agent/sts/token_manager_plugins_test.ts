import assert from "node:assert/strict";
import { EnvSettings } from "@mesh/shared/env/env_settings";
import { silentLogger } from "@mesh/shared/log/logger";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { PROXY_FLAGS } from "../cli/flags.ts";
import { tokenManagerPlugin } from "./token_manager_plugins.ts";

const context = (environment: Record<string, string>) => ({
  env: new EnvSettings("agent", environment),
  metrics: new Metrics("agent", { version: "t", tag: "t" }),
  log: silentLogger,
});

Deno.test("--tokenManagerPlugin refuses an unknown plugin and one whose settings are missing, naming them", () => {
  assert.throws(
    () => tokenManagerPlugin("Nope", context({})),
    /"Nope" is not a plugin: expected one of CloudTokenExchange/,
  );
  assert.throws(
    () => tokenManagerPlugin("CloudTokenExchange", context({})),
    /needs the project number: set CLOUD_METADATA/,
  );
  assert.throws(
    () => tokenManagerPlugin("CloudTokenExchange", context({ CLOUD_METADATA: "p|42|c|z" })),
    /needs CLOUD_CLUSTER_URL/,
  );
  assert.ok(
    tokenManagerPlugin(
      "CloudTokenExchange",
      context({ CLOUD_METADATA: "p|42|c|z", CLOUD_CLUSTER_URL: "https://c" }),
    ),
  );
});

Deno.test("--help says what each token manager plugin needs", () => {
  const help = PROXY_FLAGS.find((f) => f.name === "tokenManagerPlugin")!.help;
  assert.match(help, /CloudTokenExchange: .*CLOUD_METADATA.*CLOUD_CLUSTER_URL/);
});
