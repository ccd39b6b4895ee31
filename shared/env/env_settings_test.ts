import assert from "node:assert/strict";
import { EnvSettings, InvalidEnvError } from "./env_settings.ts";
import { ENV_VARS } from "./env_vars.ts";

const surface = JSON.parse(
  await Deno.readTextFile(new URL("../../tests/fixtures/reference-surface/surface.json", import.meta.url)),
);

Deno.test("The env registry declares every variable of both references exactly once", () => {
  const names = ENV_VARS.map((v) => v.name);
  assert.equal(new Set(names).size, names.length, "a variable is declared twice");
  for (const name of [...surface.discovery.env, ...surface.discovery.env_shared]) {
    const spec = ENV_VARS.find((v) => v.name === name);
    assert.ok(spec, `${name} is missing`);
    assert.ok(spec.programs.includes("discovery"), `${name} should be read by discovery`);
  }
  for (const name of [...surface.agent.env, ...surface.discovery.env_shared]) {
    const spec = ENV_VARS.find((v) => v.name === name);
    assert.ok(spec?.programs.includes("agent"), `${name} should be read by the agent`);
  }
});

Deno.test("EnvSettings parses typed defaults from the reference", () => {
  const env = new EnvSettings("discovery", {});
  assert.equal(env.durationMs("DISCOVERY_DEBOUNCE_AFTER"), 100);
  assert.equal(env.duration("DISCOVERY_DEBOUNCE_MAX"), 10_000_000_000n);
  assert.equal(env.int("DISCOVERY_PUSH_THROTTLE"), 100);
  assert.equal(env.bool("ENABLE_DEBUG_ON_HTTP"), true);
  assert.equal(env.float("DISCOVERY_TRACE_SAMPLING"), 100);
  assert.equal(env.string("POD_NAMESPACE"), "mesh-system");
  assert.equal(new EnvSettings("agent", {}).string("POD_NAMESPACE"), "");
});

Deno.test("EnvSettings takes values from the environment", () => {
  const env = new EnvSettings("discovery", {
    DISCOVERY_DEBOUNCE_AFTER: "250ms",
    ENABLE_ADMIN_ENDPOINTS: "T",
    DISCOVERY_XDS_CACHE_SIZE: "0",
  });
  assert.equal(env.durationMs("DISCOVERY_DEBOUNCE_AFTER"), 250);
  assert.equal(env.bool("ENABLE_ADMIN_ENDPOINTS"), true);
  assert.equal(env.int("DISCOVERY_XDS_CACHE_SIZE"), 0);
  const row = env.resolved().find((r) => r.name === "DISCOVERY_DEBOUNCE_AFTER");
  assert.deepEqual(row && [row.value, row.source], ["250ms", "environment"]);
});

Deno.test("EnvSettings stops on an invalid value naming the variable, value and expected type", async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ["DISCOVERY_DEBOUNCE_AFTER", "soon", /DISCOVERY_DEBOUNCE_AFTER="soon".*duration/],
    ["ENABLE_DEBUG_ON_HTTP", "yes", /ENABLE_DEBUG_ON_HTTP="yes".*boolean/],
    ["DISCOVERY_PUSH_THROTTLE", "1.5", /DISCOVERY_PUSH_THROTTLE="1.5".*integer/],
    ["DISCOVERY_TRACE_SAMPLING", "all", /DISCOVERY_TRACE_SAMPLING="all".*number/],
  ];
  for (const [name, value, pattern] of cases) {
    await t.step(`${name}=${value}`, () => {
      assert.throws(
        () => new EnvSettings("discovery", { [name]: value }),
        (e: unknown) => e instanceof InvalidEnvError && pattern.test(e.message),
      );
    });
  }
});

Deno.test("EnvSettings refuses undeclared names, wrong types and the other program's variables", () => {
  const env = new EnvSettings("discovery", {});
  assert.throws(() => env.string("NOT_A_VARIABLE"), /not declared/);
  assert.throws(() => env.string("DISCOVERY_PUSH_THROTTLE"), /is a int/);
  assert.throws(() => env.string("PROXY_CONFIG"), /not read by discovery/);
});

Deno.test("EnvSettings collects the MESH_META_ family", () => {
  const env = new EnvSettings("agent", { MESH_META_CLUSTER_ID: "c1", MESH_META_FOO: "bar", OTHER: "x" });
  assert.deepEqual(env.prefixed("MESH_META_"), { MESH_META_CLUSTER_ID: "c1", MESH_META_FOO: "bar" });
});

Deno.test("EnvSettings refuses values outside a variable's range, naming it, the value and the range", async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    [
      "DISCOVERY_XDS_CACHE_SIZE",
      "-5",
      /DISCOVERY_XDS_CACHE_SIZE="-5" is out of range: expected a value from 0/,
    ],
    [
      "DISCOVERY_DEBOUNCE_MAX",
      "-10s",
      /DISCOVERY_DEBOUNCE_MAX="-10s" is out of range: expected a duration of at least 0s/,
    ],
    [
      "DISCOVERY_TRACE_SAMPLING",
      "NaN",
      /DISCOVERY_TRACE_SAMPLING="NaN" is out of range: expected a finite number from 0 to 100/,
    ],
    ["DISCOVERY_TRACE_SAMPLING", "150", /expected a value from 0 to 100 percent/],
    [
      "DISCOVERY_DEBOUNCE_AFTER",
      "100000h",
      /DISCOVERY_DEBOUNCE_AFTER="100000h" is out of range: expected a duration from 0s to 1m0s/,
    ],
    ["MESH_GPRC_MAXSTREAMS", "0", /MESH_GPRC_MAXSTREAMS="0" is out of range: expected a value from 1/],
    ["MESH_GPRC_MAXRECVMSGSIZE", "-1", /MESH_GPRC_MAXRECVMSGSIZE="-1" is out of range/],
    ["DISCOVERY_PUSH_THROTTLE", "0", /DISCOVERY_PUSH_THROTTLE="0" is out of range/],
    [
      "DISCOVERY_XDS_MAX_CONNECTIONS_PER_PEER",
      "0",
      /DISCOVERY_XDS_MAX_CONNECTIONS_PER_PEER="0" is out of range: expected a value from 1 to 10000000 connections/,
    ],
    ["DISCOVERY_XDS_MAX_STREAMS", "10000001", /DISCOVERY_XDS_MAX_STREAMS="10000001" is out of range/],
    [
      "MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER",
      "200h",
      /MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER="200h" is out of range: expected a duration from 0s to 168h/,
    ],
    [
      "INITIAL_BACKOFF_MSEC",
      "-1",
      /INITIAL_BACKOFF_MSEC="-1" is out of range: expected a value from 0 to 600000 milliseconds/,
    ],
  ]; // deno-fmt-ignore
  for (const [name, value, message] of cases) {
    await t.step(`${name}=${value}`, () => {
      const program = name === "INITIAL_BACKOFF_MSEC" ? "agent" : "discovery";
      assert.throws(() => new EnvSettings(program, { [name]: value }), { name: "EnvOutOfRangeError", message });
    });
  }
  await t.step("the bounds themselves are accepted", () => {
    const env = new EnvSettings("discovery", {
      DISCOVERY_TRACE_SAMPLING: "0",
      DISCOVERY_XDS_CACHE_SIZE: "0",
      DISCOVERY_DEBOUNCE_AFTER: "1m",
    });
    assert.equal(env.durationMs("DISCOVERY_DEBOUNCE_AFTER"), 60_000);
    assert.equal(env.float("DISCOVERY_TRACE_SAMPLING"), 0);
    assert.equal(env.int("DISCOVERY_XDS_CACHE_SIZE"), 0);
  });
});
