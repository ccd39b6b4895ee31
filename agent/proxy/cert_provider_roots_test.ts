import assert from "node:assert/strict";
import { EnvSettings } from "@mesh/shared/env/env_settings";
import { LogManager } from "@mesh/shared/log/log_manager";
import { Metrics } from "@mesh/shared/metrics/metrics";
import {
  caRootPath,
  CUSTOM_ROOT_PATH,
  ORCHESTRATOR_CA_PATH,
  rootSettings,
  xdsRootPath,
} from "./cert_provider_roots.ts";
import { startWorkloadSecrets, WORKLOAD_PATHS } from "./workload_secret_source.ts";

const settings = (environment: Record<string, string>) => rootSettings(new EnvSettings("agent", environment));

Deno.test("With DISCOVERY_CERT_PROVIDER meshd (the default) the agent trusts the mesh roots for the CA and xDS", () => {
  for (const provider of [undefined, "meshd", "istiod"]) {
    const roots = settings(provider === undefined ? {} : { DISCOVERY_CERT_PROVIDER: provider });
    assert.equal(caRootPath(roots, WORKLOAD_PATHS.root), WORKLOAD_PATHS.root);
    assert.equal(xdsRootPath(roots), undefined, "xDS trusts what the CA connection trusts");
  }
});

Deno.test("DISCOVERY_CERT_PROVIDER orchestrator or custom points the CA and xDS connections at that signer's roots", () => {
  for (
    const [provider, path] of [["orchestrator", ORCHESTRATOR_CA_PATH], ["kubernetes", ORCHESTRATOR_CA_PATH], [
      "custom",
      CUSTOM_ROOT_PATH,
    ]]
  ) {
    const roots = settings({ DISCOVERY_CERT_PROVIDER: provider });
    assert.equal(caRootPath(roots, WORKLOAD_PATHS.root), path, provider);
    assert.equal(xdsRootPath(roots), path, provider);
  }
});

Deno.test("CA_ROOT_CA and XDS_ROOT_CA win over DISCOVERY_CERT_PROVIDER", () => {
  const roots = settings({
    DISCOVERY_CERT_PROVIDER: "orchestrator",
    CA_ROOT_CA: "/etc/ca-roots.pem",
    XDS_ROOT_CA: "/etc/xds-roots.pem",
  });
  assert.equal(caRootPath(roots, WORKLOAD_PATHS.root), "/etc/ca-roots.pem");
  assert.equal(xdsRootPath(roots), "/etc/xds-roots.pem");
});

Deno.test("The agent's CA connection reads the orchestrator's CA under DISCOVERY_CERT_PROVIDER=orchestrator", async () => {
  const env = new EnvSettings("agent", { DISCOVERY_CERT_PROVIDER: "orchestrator" });
  const logs = new LogManager(["default"], {
    log_as_json: true,
    log_caller: "",
    log_output_level: "default:none",
    log_rotate: "",
    log_rotate_max_age: 0,
    log_rotate_max_backups: 0,
    log_rotate_max_size: 0,
    log_stacktrace_level: "default:none",
    log_target: [],
  });
  const metrics = new Metrics("agent", { version: "test", tag: "test" });
  const caChoice = { service: "mesh", tokenPath: "/nonexistent/token" };
  await assert.rejects(
    () => startWorkloadSecrets(env, "localhost:15012", caChoice, logs, metrics),
    (error: Error) => error.message.startsWith(`No CA root at ${ORCHESTRATOR_CA_PATH}:`),
  );
});
