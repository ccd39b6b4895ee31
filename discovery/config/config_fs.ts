import { systemTimers, type Timers } from "@mesh/shared/time/timers";

/**
 * The file-system calls the config directory source makes, so that a test can make one fail (as root, which
 * reads any folder whatever its mode, a folder cannot be made unreadable otherwise).
 */
export interface ConfigFs {
  readDir(path: string): AsyncIterable<Deno.DirEntry>;
  realPath(path: string): Promise<string>;
  stat(path: string): Promise<Deno.FileInfo>;
  lstat(path: string): Promise<Deno.FileInfo>;
  readTextFile(path: string): Promise<string>;
}

/** The runtime's file system. */
export const denoConfigFs: ConfigFs = Object.freeze({
  readDir: (path: string) => Deno.readDir(path),
  realPath: (path: string) => Deno.realPath(path),
  stat: (path: string) => Deno.stat(path),
  lstat: (path: string) => Deno.lstat(path),
  readTextFile: (path: string) => Deno.readTextFile(path),
});

/** A read of a config file did not finish in time (a stalled network mount); the file was skipped. */
export class ReadTimeoutError extends Error {
  /** The read of `file` that took longer than `timeoutMs`. */
  constructor(file: string, timeoutMs: number) {
    super(`Reading "${file}" took longer than ${timeoutMs} ms; expected a regular file that reads at once`);
    this.name = "ReadTimeoutError";
  }
}

/**
 * Reads `file` as text, giving up after `timeoutMs`: one stalled read (a network mount that stopped
 * answering) must not stop every later reload. The read itself cannot be cancelled and finishes on its own.
 *
 * @throws {ReadTimeoutError} when the read takes longer than `timeoutMs`
 */
export function readTextBounded(
  fs: ConfigFs,
  file: string,
  timeoutMs: number,
  timers: Timers = systemTimers,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = timers.setTimeout(() => reject(new ReadTimeoutError(file, timeoutMs)), timeoutMs);
    fs.readTextFile(file).then(resolve, reject).finally(() => timers.clearTimeout(timer));
  });
}

/** True when `real` (a resolved path) is `root` (resolved) or lies under it. */
export function isInside(real: string, root: string): boolean {
  return real === root || real.startsWith(root === "/" ? "/" : `${root}/`);
}
