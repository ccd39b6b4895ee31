/**
 * The real programs started with settings that have no effect: each is named in one warning at startup, and
 * `/debug/env` says so.
 */
import assert from "node:assert/strict";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";

/** The JSON log lines of `output` whose level is warn and whose `setting` field is `setting`. */
function warningsFor(output: string, setting: string): Array<Record<string, unknown>> {
  return output.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
    .filter((l) => l.level === "warn" && l.setting === setting);
}

Deno.test("mesh-discovery started with a variable and a flag that do nothing warns once about each and marks the variable in /debug/env", async () => {
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      "--registries",
      "Mock",
      "--configDir",
      "examples/config",
      "--mcpMaxMsgSize",
      "1048576",
      "--log_as_json",
    ]),
    { DISCOVERY_ENABLE_INCREMENTAL_MCP: "true", DISCOVERY_HTTP10: "true" },
  );
  try {
    await server.waitFor(/"msg":"discovery server started"/);
    const output = server.stdout + server.stderr;
    const mcp = warningsFor(output, "DISCOVERY_ENABLE_INCREMENTAL_MCP");
    assert.equal(mcp.length, 1, output);
    assert.match(String(mcp[0].msg), /^DISCOVERY_ENABLE_INCREMENTAL_MCP is set but has no effect: /);
    assert.equal(warningsFor(output, "--mcpMaxMsgSize").length, 1, output);
    assert.deepEqual(
      warningsFor(output, "DISCOVERY_HTTP10"),
      [],
      "a variable that works is not warned about",
    );
    const env: Array<{ name: string; noEffect?: string }> =
      await (await fetch(`http://${addresses.httpAddr}/debug/env`)).json();
    assert.match(
      env.find((v) => v.name === "DISCOVERY_ENABLE_INCREMENTAL_MCP")?.noEffect ?? "",
      /MCP is not built/,
    );
    assert.equal(env.find((v) => v.name === "DISCOVERY_HTTP10")?.noEffect, undefined);
  } finally {
    await server.stop();
  }
});

// Every flag of `mesh-agent proxy` works now; the variables that do nothing are still named.
Deno.test("mesh-agent proxy started with a variable that does nothing warns once about it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "settings_rule_e2e_" });
  const agent = startProgram("mesh-agent", [
    "proxy",
    "--log_as_json",
  ], {
    POD_NAME: "app-1",
    POD_NAMESPACE: "example",
    INSTANCE_IP: "10.9.9.9",
    CREDENTIAL_IDENTITY_PROVIDER: "SomeCloud",
    // No CA root or token: the agent stops after the bootstrap, which comes after the warnings.
    PROXY_CONFIG: JSON.stringify({
      binaryPath: "/bin/sh",
      configPath: `${dir}/proxy`,
      proxyAdminPort: 16000,
    }),
  });
  try {
    await agent.waitFor(/"msg":"bootstrap written"/);
    const output = agent.stdout + agent.stderr;
    assert.equal(warningsFor(output, "CREDENTIAL_IDENTITY_PROVIDER").length, 1, output);
  } finally {
    await agent.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
