import assert from "node:assert/strict";
import type { CommandSpec } from "../shared/cli/command_spec.ts";
import type { FlagSpec } from "../shared/cli/flag_spec.ts";
import { ENV_VARS, type Program } from "../shared/env/env_vars.ts";
import { NOT_IMPLEMENTED_ENV, NOT_IMPLEMENTED_FLAGS } from "../shared/env/not_implemented.ts";
import { DISCOVERY_INHERITED_FLAGS, discoveryCli } from "../discovery/cli/discovery_cli.ts";
import { AGENT_INHERITED_FLAGS, agentCli } from "../agent/cli/agent_cli.ts";
import { METRIC_SPECS } from "../shared/metrics/metric_specs.ts";
import { NOT_EMITTED_METRICS } from "../shared/metrics/not_emitted_metrics.ts";
import {
  belongsTo,
  envReads,
  flagReads,
  metricMentions,
  programSources,
  type SourceFile,
} from "./helpers/source_reads.ts";

const PROGRAMS: readonly Program[] = ["discovery", "agent"];
const sources = await programSources();
const settingsDoc = await Deno.readTextFile(new URL("../docs/settings.md", import.meta.url));

/** Variables `program` declares that its code neither reads nor marks, and marks on variables it reads. */
function envViolations(program: Program, files: readonly SourceFile[]): string[] {
  const reads = envReads(files.filter((f) => belongsTo(f, program)));
  const problems: string[] = [];
  for (const spec of ENV_VARS.filter((s) => s.programs.includes(program))) {
    const read = reads.names.has(spec.name) || [...reads.prefixes].some((p) => spec.name.startsWith(p));
    const marked = NOT_IMPLEMENTED_ENV.some((m) => m.name === spec.name && m.programs.includes(program));
    if (!read && !marked) {
      problems.push(`${spec.name} is neither read by ${program} nor marked as not implemented`);
    }
    if (read && marked) {
      problems.push(`${spec.name} is read by ${program} but still marked as not implemented`);
    }
  }
  return problems;
}

function commands(program: Program): Array<[string, readonly FlagSpec[]]> {
  const tree: CommandSpec = program === "discovery"
    ? discoveryCli({}, () => new Promise<string>(() => {}))
    : agentCli({});
  const inherited = program === "discovery" ? DISCOVERY_INHERITED_FLAGS : AGENT_INHERITED_FLAGS;
  return (tree.subcommands ?? []).map((c) => [c.name, [...inherited, ...(c.flags ?? [])]]);
}

Deno.test("Every environment variable is read through the registry by each program that declares it, or marked as having no effect there", () => {
  const problems = PROGRAMS.flatMap((p) => envViolations(p, sources));
  assert.deepEqual(problems, []);
});

Deno.test("Every not-implemented mark names a declared variable of the programs it marks", () => {
  for (const mark of NOT_IMPLEMENTED_ENV) {
    const spec = ENV_VARS.find((s) => s.name === mark.name);
    assert.ok(spec, `${mark.name} is marked but not declared`);
    for (const p of mark.programs) {
      assert.ok(spec.programs.includes(p), `${mark.name} is not declared for ${p}`);
    }
    assert.match(mark.issue, /^(#\d+|none)$/, mark.name);
  }
});

Deno.test("The registry walk catches a declared variable that no code reads", () => {
  const spec = ENV_VARS.find((s) =>
    s.programs.includes("discovery") && !NOT_IMPLEMENTED_ENV.some((m) => m.name === s.name)
  )!;
  const without = sources.map((f) => ({
    path: f.path,
    code: f.code.replaceAll(`"${spec.name}"`, '"SOMETHING_ELSE"'),
  }));
  assert.deepEqual(envViolations("discovery", without), [
    `${spec.name} is neither read by discovery nor marked as not implemented`,
  ]);
});

Deno.test("The source scan counts reads through the registry and not mentions", () => {
  const reads = envReads([{
    path: "discovery/x.ts",
    code: [
      'const a = env.int("READ_INT"); const b = env.durationMs("READ_DURATION");',
      'const NAMES = ["IN_LIST", "ALSO_IN_LIST"];',
      "for (const name of NAMES) out[name] = env.string(name);",
      'const help = "MENTIONED_ONLY is documented"; env.prefixed("FAMILY_");',
    ].join("\n"),
  }]);
  assert.deepEqual([...reads.names].sort(), ["ALSO_IN_LIST", "IN_LIST", "READ_DURATION", "READ_INT"]);
  assert.deepEqual([...reads.prefixes], ["FAMILY_"]);
});

Deno.test("Every flag of every command is read by its program or marked as having no effect", () => {
  const problems: string[] = [];
  for (const program of PROGRAMS) {
    const reads = flagReads(sources.filter((f) => belongsTo(f, program)));
    for (const [command, flags] of commands(program)) {
      for (const flag of flags) {
        const marked = NOT_IMPLEMENTED_FLAGS.some((m) => m.command === command && m.name === flag.name);
        if (!reads.has(flag.name) && !marked) {
          problems.push(`${program} ${command} --${flag.name} is not read`);
        }
        if (reads.has(flag.name) && marked) {
          problems.push(`${program} ${command} --${flag.name} is read but marked`);
        }
      }
    }
  }
  assert.deepEqual(problems, []);
});

Deno.test("docs/settings.md lists every setting that has no effect", () => {
  for (const mark of [...NOT_IMPLEMENTED_ENV, ...NOT_IMPLEMENTED_FLAGS]) {
    const name = "command" in mark ? `--${mark.name}` : mark.name;
    assert.ok(settingsDoc.includes(`\`${name}\``), `${name} is missing from docs/settings.md`);
  }
});

/** Metrics `program` exports that its code never names nor lists as not emitted, and listed ones it names. */
function metricViolations(program: Program, files: readonly SourceFile[]): string[] {
  const named = metricMentions(files.filter((f) => belongsTo(f, program)));
  const problems: string[] = [];
  for (const spec of METRIC_SPECS.filter((s) => s.programs.includes(program))) {
    const listed = NOT_EMITTED_METRICS.some((m) => m.name === spec.name && m.programs.includes(program));
    if (!named.has(spec.name) && !listed) {
      problems.push(`${spec.name} is neither moved by ${program} nor listed`);
    }
    if (named.has(spec.name) && listed) {
      problems.push(`${spec.name} is moved by ${program} but listed as not emitted`);
    }
  }
  return problems;
}

Deno.test("Every metric a program exports is moved by its code or listed as not emitted there", () => {
  assert.deepEqual(PROGRAMS.flatMap((p) => metricViolations(p, sources)), []);
  for (const mark of NOT_EMITTED_METRICS) {
    const spec = METRIC_SPECS.find((s) => s.name === mark.name);
    assert.ok(spec, `${mark.name} is listed but not declared`);
    for (const p of mark.programs) {
      assert.ok(spec.programs.includes(p), `${mark.name} is not exported by ${p}`);
    }
  }
});

Deno.test("The metric walk catches an exported metric that no code moves", () => {
  const without = sources.map((f) => ({
    path: f.path,
    code: f.code.replaceAll('"discovery_no_ip"', '"something_else"'),
  }));
  assert.deepEqual(metricViolations("discovery", without), [
    "discovery_no_ip is neither moved by discovery nor listed",
  ]);
});

Deno.test("docs/settings.md lists every metric mesh-discovery exports and never moves", () => {
  for (const mark of NOT_EMITTED_METRICS.filter((m) => m.programs.includes("discovery"))) {
    assert.ok(settingsDoc.includes(`\`${mark.name}\``), `${mark.name} is missing from docs/settings.md`);
  }
});
