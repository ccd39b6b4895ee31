/**
 * What the programs' code reads of the settings registry and updates of the metrics registry, found by scanning
 * the source: the settings rule (every setting works or says it does not) is checked against it.
 */

/** The program a source file belongs to: `discovery/` and `agent/` to one, other shared code to both. */
export type SourceProgram = "discovery" | "agent";

const ROOT = new URL("../../", import.meta.url);
/** Registries themselves, tests and test support (`_test*.ts`) neither read a setting nor move a metric. */
const SKIPPED = [
  "shared/env",
  "shared/metrics/metric_specs.ts",
  "shared/metrics/not_emitted_metrics.ts",
  "shared/testing",
  "tests",
  "bench",
  "node_modules",
];
const ENV_ACCESSOR = /\.(?:bool|string|int|float|duration|durationMs|isSet)\(\s*"([A-Z][A-Z0-9_]*)"\s*\)/g;
const ENV_LOOP =
  /for\s*\(\s*const\s+(\w+)\s+of\s+(\w+)\s*\)[^\n]*\.(?:bool|string|int|float|duration)\(\s*\1\s*\)/g;
const ENV_PREFIX = /\.prefixed\(\s*"([A-Z][A-Z0-9_]*)"\s*\)/g;
const FLAG_READ =
  /\bflags(?:\.([A-Za-z_][\w]*)|\["([^"]+)"\])|\b(?:text|port|bool|portList|idList|cidrs)\(\s*"([a-z][a-z-]*)"\s*[,)]/g;
const METRIC_NAME = /"([a-z][a-z0-9_]*)"/g;

/** One source file: its path from the repository root and its text without comments. */
export interface SourceFile {
  /** Path from the repository root, such as `discovery/server.ts`. */
  readonly path: string;
  /** The text with line and block comments removed, so a name in prose does not count as a read. */
  readonly code: string;
}

/** Every non-test `.ts` file of the programs, comments stripped. */
export async function programSources(): Promise<SourceFile[]> {
  const out: SourceFile[] = [];
  async function walk(dir: string): Promise<void> {
    for await (const entry of Deno.readDir(new URL(dir, ROOT))) {
      const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
      if (SKIPPED.includes(path) || entry.name.startsWith(".") || entry.name.startsWith("_test")) continue;
      if (entry.isDirectory) {
        await walk(path);
      } else if (path.endsWith(".ts") && !path.endsWith("_test.ts") && path.includes("/")) {
        out.push({ path, code: stripComments(await Deno.readTextFile(new URL(path, ROOT))) });
      }
    }
  }
  await walk("");
  return out;
}

/** Whether `file` runs in `program`: its own tree, or shared code. */
export function belongsTo(file: SourceFile, program: SourceProgram): boolean {
  const other = program === "discovery" ? "agent/" : "discovery/";
  return !file.path.startsWith(other);
}

/** Names read through the env registry: `env.int("NAME")`, a loop over a literal list of names, a prefix family. */
export function envReads(files: readonly SourceFile[]): { names: Set<string>; prefixes: Set<string> } {
  const names = new Set<string>();
  const prefixes = new Set<string>();
  for (const { code } of files) {
    for (const m of code.matchAll(ENV_ACCESSOR)) names.add(m[1]);
    for (const m of code.matchAll(ENV_PREFIX)) prefixes.add(m[1]);
    for (const m of code.matchAll(ENV_LOOP)) {
      const list = new RegExp(`const\\s+${m[2]}\\b[^=]*=\\s*\\[([^\\]]*)\\]`).exec(code);
      for (const item of list?.[1].matchAll(/"([A-Z][A-Z0-9_]*)"/g) ?? []) names.add(item[1]);
    }
  }
  return { names, prefixes };
}

/** Flag names read from parsed flags (`flags.domain`, `flags["trust-domain"]`, `text("probe-timeout")`). */
export function flagReads(files: readonly SourceFile[]): Set<string> {
  const names = new Set<string>();
  for (const { code } of files) {
    for (const m of code.matchAll(FLAG_READ)) names.add(m[1] ?? m[2] ?? m[3]);
  }
  return names;
}

/** Metric names that appear as string literals in program code, where a metric is looked up to move it. */
export function metricMentions(files: readonly SourceFile[]): Set<string> {
  const names = new Set<string>();
  for (const { code } of files) for (const m of code.matchAll(METRIC_NAME)) names.add(m[1]);
  return names;
}

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}
