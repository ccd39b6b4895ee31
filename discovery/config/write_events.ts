import { resolve } from "node:path";

/**
 * Recent write and rename events of the files under a config directory, by absolute path, to tell a file
 * still being written from one that arrived whole. Events older than the settle period are forgotten.
 */
export class WriteEvents {
  readonly #settleMs: number;
  readonly #wallClock: () => number;
  readonly #events = new Map<string, { writtenAt?: number; renamedAt?: number }>();

  /** Events are compared over `settleMs` of `wallClock` (compared with file modification times). */
  constructor(settleMs: number, wallClock: () => number) {
    this.#settleMs = settleMs;
    this.#wallClock = wallClock;
  }

  /**
   * Remembers when each path was last written to (`create`, `modify`) or renamed into place (`rename`): a file
   * that arrived by a rename is whole, one still being written to is not.
   */
  note(event: Deno.FsEvent): void {
    const now = this.#wallClock();
    for (const path of event.paths) {
      const key = resolve(path);
      const seen = this.#events.get(key) ?? {};
      if (event.kind === "rename") seen.renamedAt = now;
      else if (event.kind === "create" || event.kind === "modify") seen.writtenAt = now;
      else continue;
      this.#events.set(key, seen);
    }
  }

  /**
   * Whether a changed file may still be being written. Written to within `settleMs`: yes. Renamed into place
   * since its last write (how editors, `kubectl cp` and config tools replace files atomically): no, it is
   * whole. Otherwise, without events for it (a swapped directory, a watch being moved): its modification time
   * says.
   */
  mayBeInProgress(file: string, modified: number | undefined): boolean {
    const now = this.#wallClock();
    const seen = this.#events.get(resolve(file));
    if (seen?.writtenAt !== undefined && now - seen.writtenAt < this.#settleMs) {
      if (seen.renamedAt === undefined || seen.renamedAt < seen.writtenAt) return true;
    }
    if (seen?.renamedAt !== undefined && now - seen.renamedAt < this.#settleMs) return false;
    return modified !== undefined && now - modified < this.#settleMs;
  }

  /** Forgets events older than the settle period, which no longer decide anything. */
  prune(): void {
    const now = this.#wallClock();
    for (const [path, seen] of this.#events) {
      const latest = Math.max(seen.writtenAt ?? -Infinity, seen.renamedAt ?? -Infinity);
      if (now - latest >= this.#settleMs) this.#events.delete(path);
    }
  }
}
