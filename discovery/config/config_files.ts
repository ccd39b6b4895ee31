import { type ConfigFs, denoConfigFs, isInside } from "./config_fs.ts";

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

/** Why an entry named like a config file was not read. */
export type SkipReason = "not_regular" | "outside_tree";

/** An entry named like a config file that was not read, and why. */
export interface SkippedPath {
  readonly path: string;
  readonly reason: SkipReason;
  /** What was found, for `/debug/configz`: `a FIFO`, `a link to /etc/shadow`. */
  readonly detail: string;
}

/** What {@link scanConfigFiles} found: the config files, the folders it could not read, the entries skipped. */
export interface ConfigFileScan {
  readonly files: string[];
  readonly unreadable: UnreadablePath[];
  readonly skipped: SkippedPath[];
}

/** How {@link scanConfigFiles} walks. */
export interface ScanOptions {
  /** The file system (the runtime's by default). */
  readonly fs?: ConfigFs;
  /** Follow symbolic links that lead out of the directory (default false: they are skipped and reported). */
  readonly followExternalLinks?: boolean;
}

/**
 * Like {@link listConfigFiles}, but a folder below `dir` that cannot be read is skipped and reported rather
 * than failing the walk, so that one unreadable folder does not stop every other file from reloading. Only
 * regular files are listed: a FIFO, socket or device named like a config file is reported as skipped (opening
 * a FIFO blocks until something writes to it). A symbolic link whose target lies outside `dir` is skipped
 * and reported unless `followExternalLinks`: a link to `/etc/shadow` must not make the server read it.
 */
export async function scanConfigFiles(dir: string, options: ScanOptions = {}): Promise<ConfigFileScan> {
  const fs = options.fs ?? denoConfigFs;
  const root = dir.replace(/\/+$/, "") || "/";
  const scan: ConfigFileScan = { files: [], unreadable: [], skipped: [] };
  const walker: Walker = {
    fs,
    scan,
    visited: new Set(),
    realRoot: await fs.realPath(root),
    followExternalLinks: options.followExternalLinks ?? false,
  };
  await walk(walker, root, true);
  scan.files.sort();
  const byPath = (a: { path: string }, b: { path: string }) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
  scan.unreadable.sort(byPath);
  scan.skipped.sort(byPath);
  return scan;
}

interface Walker {
  readonly fs: ConfigFs;
  readonly scan: ConfigFileScan;
  readonly visited: Set<string>;
  readonly realRoot: string;
  readonly followExternalLinks: boolean;
}

async function walk(walker: Walker, dir: string, isRoot: boolean): Promise<void> {
  const { fs, scan, visited } = walker;
  const files = scan.files;
  let real: string;
  try {
    real = await fs.realPath(dir);
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
    for await (const entry of fs.readDir(dir)) entries.push(entry);
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
      let target: Deno.FileInfo;
      let real: string;
      try {
        real = await fs.realPath(path);
        target = await fs.stat(path);
      } catch {
        continue; // a dangling link is not a config file
      }
      if (!walker.followExternalLinks && !isInside(real, walker.realRoot)) {
        if (target.isDirectory || isConfigFileName(entry.name)) {
          scan.skipped.push({
            path,
            reason: "outside_tree",
            detail: `a link to "${real}", outside the directory`,
          });
        }
        continue;
      }
      isDirectory = target.isDirectory;
      isFile = target.isFile;
    }
    if (isDirectory) folders.push(walk(walker, path, false));
    else if (!isConfigFileName(entry.name)) continue;
    else if (isFile) files.push(path);
    else scan.skipped.push({ path, reason: "not_regular", detail: await describeSpecial(fs, path) });
  }
  await Promise.all(folders);
}

/** What a non-regular entry is: `a FIFO`, `a socket`, a device. */
async function describeSpecial(fs: ConfigFs, path: string): Promise<string> {
  try {
    const info = await fs.stat(path);
    if (info.isFifo) return "a FIFO, not a regular file";
    if (info.isSocket) return "a socket, not a regular file";
    if (info.isBlockDevice || info.isCharDevice) return "a device, not a regular file";
  } catch {
    // gone meanwhile
  }
  return "not a regular file";
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
