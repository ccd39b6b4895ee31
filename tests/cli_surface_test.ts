import assert from "node:assert/strict";
import type { CommandSpec } from "../shared/cli/command_spec.ts";
import { type FlagSpec, formatFlagDefault } from "../shared/cli/flag_spec.ts";
import { DISCOVERY_INHERITED_FLAGS, discoveryCli } from "../discovery/cli/discovery_cli.ts";
import { AGENT_INHERITED_FLAGS, agentCli } from "../agent/cli/agent_cli.ts";

interface SurfaceFlag {
  long: string;
  short: string | null;
  type: string;
  default: string | null;
}

const surface = JSON.parse(
  await Deno.readTextFile(new URL("fixtures/reference-surface/surface.json", import.meta.url)),
);

const TYPE_NAMES: Record<string, FlagSpec["type"]> = {
  "string": "string",
  "uint16": "uint16",
  "duration": "duration",
  "boolean flag": "bool",
  "int": "int",
  "float32": "float32",
  "string slice": "stringSlice",
  "string array": "stringArray",
};

/** The reference's default text as our spec would print it (`empty` → no default, `off` → false). */
function expectedDefault(flag: SurfaceFlag): string | undefined {
  const text = flag.default ?? "";
  if (text === "empty" || text === "off" || text === "" || text.startsWith("empty;")) return undefined;
  if (text === "(shown as on)") return "true";
  if (flag.type === "string") return JSON.stringify(text);
  return text;
}

function checkFlags(actual: readonly FlagSpec[], expected: SurfaceFlag[], where: string): void {
  assert.deepEqual(
    actual.map((f) => `--${f.name}`).sort(),
    expected.map((f) => f.long).sort(),
    `${where}: flag names differ from the reference`,
  );
  for (const want of expected) {
    const got = actual.find((f) => `--${f.name}` === want.long)!;
    assert.equal(got.short ? `-${got.short}` : null, want.short, `${where} ${want.long}: short name`);
    assert.equal(got.type, TYPE_NAMES[want.type], `${where} ${want.long}: type`);
    // A null default means the reference table leaves it unstated (the agent's `version --short`).
    if (want.default !== null) {
      assert.equal(formatFlagDefault(got), expectedDefault(want), `${where} ${want.long}: default`);
    }
  }
}

function subcommand(tree: CommandSpec, name: string): CommandSpec {
  const found = tree.subcommands?.find((c) => c.name === name);
  assert.ok(found, `subcommand ${name} is missing`);
  return found;
}

const neverStop = () => new Promise<string>(() => {});

Deno.test("mesh-discovery has every subcommand and flag of the reference, with names, types and defaults", async (t) => {
  const tree = discoveryCli({}, neverStop);
  assert.deepEqual(
    tree.subcommands!.map((c) => c.name).sort(),
    Object.keys(surface.discovery.subcommands).sort(),
  );
  await t.step(
    "common flags",
    () => checkFlags(DISCOVERY_INHERITED_FLAGS, surface.discovery.common, "common"),
  );
  for (const [name, flags] of Object.entries(surface.discovery.subcommands) as [string, SurfaceFlag[]][]) {
    await t.step(name, () => checkFlags(subcommand(tree, name).flags ?? [], flags, name));
  }
});

Deno.test("mesh-agent has every subcommand and flag of the reference, with names, types and defaults", async (t) => {
  const tree = agentCli({});
  assert.deepEqual(
    tree.subcommands!.map((c) => c.name).sort(),
    Object.keys(surface.agent.subcommands).sort(),
  );
  await t.step("common flags", () => checkFlags(AGENT_INHERITED_FLAGS, surface.agent.common, "common"));
  for (const [name, flags] of Object.entries(surface.agent.subcommands) as [string, SurfaceFlag[]][]) {
    await t.step(name, () => checkFlags(subcommand(tree, name).flags ?? [], flags, name));
  }
});
