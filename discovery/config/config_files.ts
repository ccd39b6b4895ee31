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
  const root = dir.replace(/\/+$/, "") || "/";
  const files: string[] = [];
  const visited = new Set<string>();
  await walk(root, files, visited, true);
  return files.sort();
}

async function walk(dir: string, files: string[], visited: Set<string>, isRoot: boolean): Promise<void> {
  let real: string;
  try {
    real = await Deno.realPath(dir);
  } catch (error) {
    if (!isRoot && error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  if (visited.has(real)) return;
  visited.add(real);
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) entries.push(entry);
  } catch (error) {
    if (!isRoot && error instanceof Deno.errors.NotFound) return;
    throw error;
  }
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
    if (isDirectory) await walk(path, files, visited, false);
    else if (isFile && isConfigFileName(entry.name)) files.push(path);
  }
}
