/**
 * Which config files a burst of watch events names, so that an edit can be read alone instead of walking the
 * whole config tree. Everything these functions cannot vouch for answers `undefined`, and the caller walks
 * the tree: reading alone is an optimisation, never a different result.
 *
 * @module
 */
import { dirname, resolve } from "node:path";
import { isConfigFileName } from "./config_files.ts";

/**
 * The absolute paths one watch event names, or undefined when the event cannot say what changed: no paths, a
 * rescan flag (the kernel's queue overflowed), or a kind other than create, modify, rename or remove.
 */
export function pathsNamedBy(event: Deno.FsEvent | undefined): string[] | undefined {
  if (event === undefined || event.flag || event.paths.length === 0) return undefined;
  const { kind } = event;
  if (kind !== "create" && kind !== "modify" && kind !== "rename" && kind !== "remove") return undefined;
  return event.paths.map((path) => resolve(path));
}

/**
 * The config files to read again for `named` (absolute paths the watcher named under `dir`), as the walk of
 * `dir` spells them; undefined when only a walk is sure to see what changed. `known` maps the absolute path of
 * every config file read so far to its walk path.
 *
 * A named path is read alone when it is a known config file that is still a regular file, or a new regular
 * config file in a folder that already holds known files (or the root). A path that is gone and held no known
 * file, or a regular file that is not a config file (an editor's backup, a staged copy), is skipped. Anything
 * else — a known file removed or turned into a folder or link, a folder, a link, a path inside a hidden folder
 * or named like an orchestrator mount's `..data`, a path outside `dir` — needs the walk.
 */
export async function filesToReread(
  named: Iterable<string>,
  known: ReadonlyMap<string, string>,
  dir: string,
): Promise<string[] | undefined> {
  const root = resolve(dir);
  const walkRoot = dir.replace(/\/+$/, "") || "/";
  let knownDirs: Set<string> | undefined;
  const files: string[] = [];
  for (const path of named) {
    let info: Deno.FileInfo | undefined;
    try {
      info = await Deno.lstat(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) return undefined;
    }
    const walkPath = known.get(path);
    if (walkPath !== undefined) {
      if (!info?.isFile) return undefined;
      files.push(walkPath);
      continue;
    }
    if (path === root || !path.startsWith(`${root}/`)) return undefined;
    const segments = path.slice(root.length + 1).split("/");
    const name = segments[segments.length - 1];
    // The files a hidden folder or a `..data` link changes are known by other paths (the links to them).
    if (segments.slice(0, -1).some((s) => s.startsWith(".")) || name.startsWith("..")) return undefined;
    knownDirs ??= foldersOf(known.keys(), root);
    if (info === undefined) {
      if (knownDirs.has(path) || [...knownDirs].some((folder) => folder.startsWith(`${path}/`))) {
        return undefined;
      }
      continue;
    }
    if (!info.isFile) return undefined;
    if (!isConfigFileName(name)) continue;
    if (!knownDirs.has(dirname(path))) return undefined;
    files.push(`${walkRoot === "/" ? "" : walkRoot}/${segments.join("/")}`);
  }
  return files;
}

/** The folders holding `files` (absolute paths), and `root`. */
function foldersOf(files: Iterable<string>, root: string): Set<string> {
  const folders = new Set([root]);
  for (const file of files) folders.add(dirname(file));
  return folders;
}
