/**
 * Rewrites every relative import that crosses from one workspace member into another (`../shared/env/x.ts`
 * seen from `discovery/`) into the target package's name (`@mesh/shared/env/x`), and adds the export each
 * rewritten import needs to the target member's `deno.json`. With `--check` it writes nothing and exits 1 when
 * such an import remains or an export is missing, which `deno task check` runs so none comes back.
 *
 * Idempotent: run it again after a merge and it touches only what the merge added.
 * `deno run --allow-read=. --allow-write=. tools/package_imports.ts [--check]`
 *
 * The export a module gets is its path inside its package without `.ts`; a `mod.ts` is exported as its folder
 * (`shared/grpc/mod.ts` is `@mesh/shared/grpc`, `shared/mod.ts` is `@mesh/shared`). Code outside every member
 * (`tests/`, `bench/`, `examples/`, the root `mod.ts`) belongs to no package and is left as it is: it is the
 * workspace's own harness, and its relative imports reach the same module instances the package names do.
 * @module
 */
import { dirname, join, normalize, relative, sep as SEPARATOR } from "node:path";

/** One workspace member: its folder relative to the root, its package name and its `deno.json`. */
interface Member {
  readonly dir: string;
  readonly name: string;
  readonly configPath: string;
  readonly config: { exports?: string | Record<string, string>; [key: string]: unknown };
}

/** A relative import that crosses into another member, found in one file. */
interface CrossImport {
  readonly file: string;
  readonly line: number;
  readonly specifier: string;
  readonly replacement: string;
}

const SOURCE_EXTENSIONS = [".ts", ".tsx", ".mts", ".js", ".mjs"];
const SKIPPED_DIRS = new Set(["node_modules", "dist", ".git", ".bench"]);

/**
 * Matches the module specifier of `import … from "…"`, `export … from "…"`, `import "…"` and `import("…")`
 * (also in `typeof import("…")` types). Group 1 is the text before the quote, group 2 the quote, 3 the path.
 */
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|^\s*import\s*)(["'])(\.{1,2}\/[^"'\n]*)\2/gm;

function readMembers(root: string): Member[] {
  const rootConfig = JSON.parse(Deno.readTextFileSync(join(root, "deno.json")));
  const dirs: string[] = rootConfig.workspace ?? [];
  return dirs.map((entry) => {
    const dir = normalize(entry).replace(/\/$/, "");
    const configPath = join(root, dir, "deno.json");
    const config = JSON.parse(Deno.readTextFileSync(configPath));
    if (typeof config.name !== "string") {
      throw new Error(
        `Workspace member "${dir}" has no "name" in "${configPath}"; expected e.g. "@mesh/${dir}"`,
      );
    }
    return { dir, name: config.name, configPath, config };
  });
}

function memberOf(members: readonly Member[], path: string): Member | undefined {
  return members.find((member) => path === member.dir || path.startsWith(member.dir + SEPARATOR));
}

/** The export key (`./env/env_vars`, or `.` for the member's `mod.ts`) under which `pathInMember` is exported. */
export function exportKeyOf(pathInMember: string): string {
  const withoutExtension = pathInMember.replace(/\.(ts|tsx|mts|js|mjs)$/, "");
  if (withoutExtension === "mod") return ".";
  if (withoutExtension.endsWith("/mod")) return "./" + withoutExtension.slice(0, -"/mod".length);
  return "./" + withoutExtension;
}

/** The package specifier (`@mesh/shared/env/env_vars`) for export `key` of package `name`. */
export function packageSpecifier(name: string, key: string): string {
  return key === "." ? name : `${name}/${key.slice(2)}`;
}

function* sourceFiles(root: string, dir: string): Generator<string> {
  for (const entry of Deno.readDirSync(join(root, dir))) {
    const path = dir === "." ? entry.name : join(dir, entry.name);
    if (entry.isDirectory) {
      if (!SKIPPED_DIRS.has(entry.name)) yield* sourceFiles(root, path);
    } else if (entry.isFile && SOURCE_EXTENSIONS.some((extension) => entry.name.endsWith(extension))) {
      yield path;
    }
  }
}

/** Rewrites one file's cross-member imports; returns the new text and what it changed. */
export function rewriteSource(
  file: string,
  text: string,
  members: readonly Member[],
  wantExport: (member: Member, key: string, target: string) => void,
): { text: string; changes: CrossImport[] } {
  const home = memberOf(members, file);
  const changes: CrossImport[] = [];
  if (home === undefined) return { text, changes };
  const rewritten = text.replace(
    SPECIFIER,
    (whole, before: string, quote: string, specifier: string, offset) => {
      const targetPath = normalize(join(dirname(file), specifier));
      const target = memberOf(members, targetPath);
      if (target === undefined || target === home) return whole;
      const key = exportKeyOf(relative(target.dir, targetPath).split(SEPARATOR).join("/"));
      wantExport(target, key, "./" + relative(target.dir, targetPath).split(SEPARATOR).join("/"));
      const replacement = packageSpecifier(target.name, key);
      const line = text.slice(0, offset).split("\n").length;
      changes.push({ file, line, specifier, replacement });
      return `${before}${quote}${replacement}${quote}`;
    },
  );
  return { text: rewritten, changes };
}

function exportsOf(member: Member): Record<string, string> {
  const exports = member.config.exports;
  if (exports === undefined) return {};
  return typeof exports === "string" ? { ".": exports } : { ...exports };
}

/** Runs the rewrite (or, with `check`, only reports); returns the number of problems left for `--check`. */
export function run(root: string, check: boolean): number {
  const members = readMembers(root);
  const wanted = new Map<Member, Map<string, string>>();
  const wantExport = (member: Member, key: string, target: string) => {
    const keys = wanted.get(member) ?? new Map<string, string>();
    keys.set(key, target);
    wanted.set(member, keys);
  };
  let problems = 0;
  for (const member of members) {
    for (const file of sourceFiles(root, member.dir)) {
      const text = Deno.readTextFileSync(join(root, file));
      const result = rewriteSource(file, text, members, wantExport);
      for (const change of result.changes) {
        if (check) {
          console.error(
            `${change.file}:${change.line}: relative import "${change.specifier}" crosses into another ` +
              `workspace member; expected "${change.replacement}"`,
          );
          problems++;
        }
      }
      if (!check && result.text !== text) Deno.writeTextFileSync(join(root, file), result.text);
    }
  }
  // Already rewritten imports still need their exports: collect the package specifiers in use too.
  collectNamedImports(root, members, wantExport);
  for (const [member, keys] of wanted) {
    const exports = exportsOf(member);
    const missing = [...keys].filter(([key]) => exports[key] === undefined);
    for (const [key, target] of missing) {
      if (check) {
        console.error(
          `${member.configPath}: no export "${key}" for "${target}", which another member imports`,
        );
        problems++;
      } else {
        exports[key] = target;
      }
    }
    for (const [key, target] of keys) {
      if (exports[key] !== target && !missing.some(([missingKey]) => missingKey === key)) {
        console.error(`${member.configPath}: export "${key}" is "${exports[key]}", expected "${target}"`);
        problems++;
      }
    }
    if (!check && missing.length > 0) {
      const sorted = Object.fromEntries(
        Object.entries(exports).sort(([a], [b]) =>
          a === "." ? -1 : b === "." ? 1 : a < b ? -1 : a > b ? 1 : 0
        ),
      );
      const config = { ...member.config, exports: sorted };
      Deno.writeTextFileSync(member.configPath, JSON.stringify(config, null, 2) + "\n");
    }
  }
  return problems;
}

/** Notes every `@mesh/<member>/…` import in member code, so an export removed by hand is put back. */
function collectNamedImports(
  root: string,
  members: readonly Member[],
  wantExport: (member: Member, key: string, target: string) => void,
): void {
  const named = /(\bfrom\s*|\bimport\s*\(\s*|^\s*import\s*)(["'])(@[^"'\n/]+\/[^"'\n/]+)(\/[^"'\n]*)?\2/gm;
  for (const member of members) {
    for (const file of sourceFiles(root, member.dir)) {
      const text = Deno.readTextFileSync(join(root, file));
      for (const match of text.matchAll(named)) {
        const target = members.find((candidate) => candidate.name === match[3]);
        if (target === undefined || target === member) continue;
        const key = match[4] === undefined ? "." : "." + match[4];
        const base = key === "." ? "mod" : key.slice(2);
        const asFile = join(root, target.dir, base + ".ts");
        const asFolder = join(root, target.dir, base, "mod.ts");
        const path = existsFile(asFile) ? asFile : existsFile(asFolder) ? asFolder : undefined;
        if (path !== undefined) wantExport(target, key, "./" + relative(join(root, target.dir), path));
      }
    }
  }
}

function existsFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

if (import.meta.main) {
  const check = Deno.args.includes("--check");
  const root = Deno.cwd();
  const problems = run(root, check);
  if (problems > 0) {
    console.error(
      `${problems} cross-member import problem(s); run "deno run --allow-read=. --allow-write=. ` +
        `tools/package_imports.ts" to fix them (or deno task imports:fix)`,
    );
    Deno.exit(1);
  }
}
