import type { LogSink } from "./sinks.ts";

/** Limits of a rotating log file, with the references' units: size in megabytes, age in days; 0 = unlimited. */
export interface RotationLimits {
  /** Size in megabytes beyond which the file is rotated before the next write; 0 means no limit. */
  readonly maxSizeMb: number;
  /** Age in days beyond which backups are deleted; 0 means no limit. */
  readonly maxAgeDays: number;
  /** Backups kept, newest first, before older ones are deleted; 0 means no limit. */
  readonly maxBackups: number;
}

const encoder = new TextEncoder();

/**
 * A log file that rotates when it would pass `maxSizeMb`: the current file is renamed to
 * `<name>-<UTC timestamp><ext>`, a new one is opened, and backups beyond `maxBackups` or older than `maxAgeDays`
 * are removed. Written synchronously, as lumberjack (which Istio uses) does, so a crash loses no line.
 */
export class RotatingFileSink implements LogSink {
  #file: Deno.FsFile;
  #size: number;

  /** Opens `path` for appending at once (its current size counts toward the limit); `now` names backups. */
  constructor(
    readonly path: string,
    private readonly limits: RotationLimits,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.#file = Deno.openSync(path, { append: true, create: true });
    this.#size = this.#file.statSync().size;
  }

  /** Appends `line`, rotating first when it would take a non-empty file past the size limit. */
  write(line: string): void {
    const bytes = encoder.encode(line);
    const max = this.limits.maxSizeMb * 1024 * 1024;
    if (max > 0 && this.#size > 0 && this.#size + bytes.length > max) this.rotate();
    let written = 0;
    while (written < bytes.length) written += this.#file.writeSync(bytes.subarray(written));
    this.#size += bytes.length;
  }

  /** Moves the current file aside as a backup, opens a fresh one, and prunes old backups. */
  rotate(): void {
    this.#file.close();
    Deno.renameSync(this.path, this.#backupName(this.now()));
    this.#file = Deno.openSync(this.path, { append: true, create: true });
    this.#size = 0;
    this.#prune();
  }

  /** Closes the current file; backups are left as they are. */
  close(): void {
    this.#file.close();
  }

  #parts(): { dir: string; stem: string; ext: string } {
    const slash = this.path.lastIndexOf("/");
    const dir = slash < 0 ? "." : this.path.slice(0, slash) || "/";
    const base = this.path.slice(slash + 1);
    const dot = base.lastIndexOf(".");
    return dot > 0 ? { dir, stem: base.slice(0, dot), ext: base.slice(dot) } : { dir, stem: base, ext: "" };
  }

  #backupName(at: Date): string {
    const { dir, stem, ext } = this.#parts();
    const stamp = at.toISOString().replace(/:/g, "-").replace("Z", "");
    let name = `${dir}/${stem}-${stamp}${ext}`;
    for (let i = 1; exists(name); i++) name = `${dir}/${stem}-${stamp}.${i}${ext}`;
    return name;
  }

  /** Backups as `{ path, mtime }`, newest first. */
  backups(): Array<{ path: string; mtime: number }> {
    const { dir, stem, ext } = this.#parts();
    const out: Array<{ path: string; mtime: number }> = [];
    for (const entry of Deno.readDirSync(dir)) {
      if (!entry.isFile || !entry.name.startsWith(`${stem}-`) || !entry.name.endsWith(ext)) continue;
      const path = `${dir}/${entry.name}`;
      out.push({ path, mtime: Deno.statSync(path).mtime?.getTime() ?? 0 });
    }
    return out.sort((a, b) => b.mtime - a.mtime || b.path.localeCompare(a.path));
  }

  #prune(): void {
    const cutoff = this.now().getTime() - this.limits.maxAgeDays * 86_400_000;
    this.backups().forEach((backup, index) => {
      const tooMany = this.limits.maxBackups > 0 && index >= this.limits.maxBackups;
      const tooOld = this.limits.maxAgeDays > 0 && backup.mtime < cutoff;
      if (tooMany || tooOld) Deno.removeSync(backup.path);
    });
  }
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
