/** File name endings the config directory source reads. */
export const CONFIG_FILE_EXTENSIONS: readonly string[] = [".yaml", ".yml", ".json"];

/** Reports whether a file name is one the config directory source reads (not hidden, known extension). */
export function isConfigFileName(name: string): boolean {
  return !name.startsWith(".") && CONFIG_FILE_EXTENSIONS.some((ext) => name.toLowerCase().endsWith(ext));
}

/**
 * Lists the config files under `dir`, recursively, sorted. Hidden entries (a leading `.`) are skipped, which
 * also skips the `..data` and `..2021_…` folders of orchestrator volume mounts whose files are reachable
 * through their symbolic links. Symbolic links are followed, each real directory visited once. Entries that
 * disappear during the walk are skipped; an unreadable `dir` itself throws.
 */
export async function listConfigFiles(dir: string): Promise<string[]> {
  return (await scanConfigFiles(dir)).files;
}

/** A folder under the config directory that could not be read, and why. */
export interface UnreadablePath {
  readonly path: string;
  readonly reason: string;
}

/** What {@link scanConfigFiles} found: the config files, and the folders it had to skip. */
export interface ConfigFileScan {
  readonly files: string[];
  readonly unreadable: UnreadablePath[];
}

/**
 * Like {@link listConfigFiles}, but a folder below `dir` that cannot be read is skipped and reported rather
 * than failing the walk, so that one unreadable folder does not stop every other file from reloading.
 */
export async function scanConfigFiles(dir: string): Promise<ConfigFileScan> {
  const root = dir.replace(/\/+$/, "") || "/";
  const scan: ConfigFileScan = { files: [], unreadable: [] };
  const visited = new Set<string>();
  await walk(root, scan, visited, true);
  scan.files.sort();
  scan.unreadable.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  return scan;
}

async function walk(dir: string, scan: ConfigFileScan, visited: Set<string>, isRoot: boolean): Promise<void> {
  const files = scan.files;
  let real: string;
  try {
    real = await Deno.realPath(dir);
  } catch (error) {
    if (isRoot) throw error;
    if (!(error instanceof Deno.errors.NotFound)) {
      scan.unreadable.push({ path: dir, reason: reasonOf(error) });
    }
    return;
  }
  if (visited.has(real)) return;
  visited.add(real);
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) entries.push(entry);
  } catch (error) {
    if (isRoot) throw error;
    if (!(error instanceof Deno.errors.NotFound)) {
      scan.unreadable.push({ path: dir, reason: reasonOf(error) });
    }
    return;
  }
  // Folders are walked side by side: a tree of a hundred namespace folders read one after another took
  // tens of milliseconds, which every config edit waited for.
  const folders: Promise<void>[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const path = `${dir === "/" ? "" : dir}/${entry.name}`;
    let isDirectory = entry.isDirectory;
    let isFile = entry.isFile;
    if (entry.isSymlink) {
      try {
        const target = await Deno.stat(path);
        isDirectory = target.isDirectory;
        isFile = target.isFile;
      } catch {
        continue; // a dangling link is not a config file
      }
    }
    if (isDirectory) folders.push(walk(path, scan, visited, false));
    else if (isFile && isConfigFileName(entry.name)) files.push(path);
  }
  await Promise.all(folders);
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
