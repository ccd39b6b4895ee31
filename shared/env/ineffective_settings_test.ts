import assert from "node:assert/strict";
import { RecordingLogger } from "../testing/recording_logger.ts";
import { EnvSettings } from "./env_settings.ts";
import { ineffectiveSettings, warnIneffectiveSettings } from "./ineffective_settings.ts";

Deno.test("A variable that has no effect logs one warning naming it when set", () => {
  const log = new RecordingLogger();
  const env = new EnvSettings("discovery", {
    DISCOVERY_ENABLE_INCREMENTAL_MCP: "true",
    DISCOVERY_HTTP10: "true",
  });
  warnIneffectiveSettings(log, env, "discovery", new Set());
  assert.deepEqual(log.lines, [{
    level: "warn",
    msg: "DISCOVERY_ENABLE_INCREMENTAL_MCP is set but has no effect: MCP is not built",
    fields: { setting: "DISCOVERY_ENABLE_INCREMENTAL_MCP", issue: "none" },
  }]);
});

Deno.test("Settings left at their defaults are not warned about", () => {
  assert.deepEqual(ineffectiveSettings(new EnvSettings("discovery", {}), "discovery", new Set()), []);
  assert.deepEqual(ineffectiveSettings(new EnvSettings("agent", {}), "proxy", new Set()), []);
});

Deno.test("A variable is ineffective per program: a discovery setting set for the agent is named there only", () => {
  const environment = { DISCOVERY_DEBOUNCE_AFTER: "200ms" };
  assert.deepEqual(
    ineffectiveSettings(new EnvSettings("discovery", environment), "discovery", new Set()),
    [],
  );
  assert.deepEqual(ineffectiveSettings(new EnvSettings("agent", environment), "proxy", new Set()), [{
    setting: "DISCOVERY_DEBOUNCE_AFTER",
    issue: "none",
    reason: "a mesh-discovery setting that mesh-agent does not use",
  }]);
});

Deno.test("A flag that has no effect is named only when given, and only for its command", () => {
  const env = new EnvSettings("discovery", {});
  assert.deepEqual(
    ineffectiveSettings(env, "discovery", new Set(["mcpMaxMsgSize", "domain"])).map((s) => s.setting),
    ["--mcpMaxMsgSize"],
  );
  assert.deepEqual(ineffectiveSettings(env, "request", new Set(["mcpMaxMsgSize"])), []);
});

Deno.test("/debug/env's listing marks a variable that has no effect, and only in the program where it has none", () => {
  const discovery = new EnvSettings("discovery", {}).resolved();
  assert.equal(
    discovery.find((v) => v.name === "DISCOVERY_ENABLE_INCREMENTAL_MCP")?.noEffect,
    "MCP is not built (issue: none)",
  );
  assert.equal(discovery.find((v) => v.name === "DISCOVERY_DEBOUNCE_AFTER")?.noEffect, undefined);
  const agent = new EnvSettings("agent", {}).resolved();
  assert.match(
    agent.find((v) => v.name === "DISCOVERY_DEBOUNCE_AFTER")?.noEffect ?? "",
    /mesh-discovery setting/,
  );
});
