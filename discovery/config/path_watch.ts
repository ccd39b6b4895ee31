import { type Logger, silentLogger } from "@mesh/shared/log/logger";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import { resolve } from "node:path";
import { IsolatedFsWatcher } from "./isolated_fs_watcher.ts";

/** Whether a watched directory is there: `watching` (found and watched) or `lost` (gone or not a directory). */
export type PathWatchState = "watching" | "lost";

/** Options of {@link PathWatch}. */
export interface PathWatchOptions {
  /** The directory, by path: whatever is found at this path is what is watched. */
  readonly path: string;
  /**
   * Called on every change under the directory, with the kernel's event (its kind and paths), and without one
   * whenever what the path names changes.
   */
  readonly onChange: (event?: Deno.FsEvent) => void;
  /** Called when the state changes (`lost` when the path disappears, `watching` when it is back). */
  readonly onState?: (state: PathWatchState) => void;
  /** How often the path is checked for a replacement (default 1 s). */
  readonly checkMs?: number;
  /** Watch the whole tree under the directory (default) or only its entries. */
  readonly recursive?: boolean;
  /**
   * Folders under the directory whose entries' changes must be reported too (the owner knows which hold its
   * files); a change in one with no event for two checks means the watch stalled, as for the directory's own.
   */
  readonly folders?: () => Iterable<string>;
  readonly logger?: Logger;
  readonly timers?: Timers;
  /** Reads a path's information, following links (default `Deno.stat`); tests count the calls. */
  readonly stat?: (path: string) => Promise<Deno.FileInfo>;
}

/**
 * Folders whose times one check reads, at most: the others wait their turn in later checks. A tree of a
 * thousand namespace folders read every second cost a core several percent at rest; bounded, a stall in one of
 * N folders is still found, within N / 32 checks.
 */
export const FOLDER_STATS_PER_CHECK = 32;

/** How far behind real time file times may be: a kernel tick, 1 to 10 ms. */
const COARSE_CLOCK_MS = 10;

/**
 * The identity of what a path names, following links: device, inode and creation time. A folder removed and
 * made again at once often gets the inode number back; its creation time tells the two apart.
 */
function identityOf(info: Deno.FileInfo): string {
  return `${info.dev}:${info.ino}:${info.birthtime?.getTime() ?? ""}`;
}

/** When a folder's entries last changed (wall-clock milliseconds): adding, removing or renaming one sets it. */
function entriesChangedAt(info: Deno.FileInfo): number {
  return info.mtime?.getTime() ?? -Infinity;
}

/**
 * Watches a directory by its path rather than by its inode. A kernel watch follows the inode it was placed
 * on, so a directory renamed away and replaced, removed and recreated, or a symbolic link swapped to another
 * folder would leave it watching something nobody edits any more. Here the path is checked every `checkMs`:
 * when it names another directory the watch moves there and `onChange` runs; when it names nothing the state
 * is `lost` until it is back. The watch is placed again at once when it reports the folder itself removed or
 * renamed (it would report nothing more), and when the folder's entries changed but no event came within two
 * checks (the runtime's watcher stalls on a FIFO; see `isolated_fs_watcher.ts`).
 */
export class PathWatch {
  readonly #options: PathWatchOptions;
  readonly #timers: Timers;
  readonly #logger: Logger;
  #identity: string | undefined;
  /** Set when the watch can no longer be trusted: the next check places it again. */
  #stale = false;
  /** Wall-clock time the watch was placed, and of its last event (compared with the folder's times). */
  #placedAt = -Infinity;
  #lastEventAt = -Infinity;
  /** True when the last check found the folder's entries changed after the watch's last event. */
  #suspect = false;
  #watcher: IsolatedFsWatcher | undefined;
  #loop: Promise<void> = Promise.resolve();
  #timer: unknown;
  #state: PathWatchState = "lost";
  #checking = false;
  #started = false;
  #stopped = false;
  /** When each folder's entries last changed, as its last turn read it. */
  readonly #folderTimes = new Map<string, number>();
  /** Where the next check's turn of folders starts. */
  #folderTurn = 0;
  readonly #stat: (path: string) => Promise<Deno.FileInfo>;

  /** A watch over `options.path`; nothing happens until started. */
  constructor(options: PathWatchOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
    this.#logger = options.logger ?? silentLogger;
    this.#stat = options.stat ?? ((path) => Deno.stat(path));
  }

  /** `watching` while the path names a directory that is watched, `lost` otherwise. */
  get state(): PathWatchState {
    return this.#state;
  }

  /** Places the watch (when the path is there) and starts checking the path. */
  async start(): Promise<void> {
    await this.check();
    this.#started = true;
    this.#schedule();
  }

  /** Looks at the path now; moves the watch and reports a change when it names something else. */
  async check(): Promise<void> {
    if (this.#checking || this.#stopped) return;
    this.#checking = true;
    try {
      let identity: string | undefined;
      let stale = this.#stale;
      this.#stale = false;
      try {
        const info = await this.#stat(this.#options.path);
        identity = info.isDirectory ? identityOf(info) : undefined;
        if (
          identity !== undefined && identity === this.#identity &&
          this.#isSilent(await this.#latestChange(info))
        ) {
          this.#logger.warn(
            `watch on ${this.#options.path} delivered no event for a change of its entries; watching it again`,
            { dir: this.#options.path },
          );
          stale = true;
        }
      } catch {
        identity = undefined;
      }
      if ((identity === this.#identity && !stale) || this.#stopped) return;
      this.#identity = identity;
      this.#close();
      await this.#loop;
      if (identity !== undefined && !this.#stopped) await this.#open();
      const state: PathWatchState = this.#identity === undefined || !this.#watcher ? "lost" : "watching";
      if (state !== this.#state) {
        this.#state = state;
        this.#options.onState?.(state);
      }
      // The first look only places the watch: the owner reads the tree itself when it starts.
      if (this.#started) this.#options.onChange();
    } finally {
      this.#checking = false;
    }
  }

  /**
   * When the entries of the directory, or of the folders the owner named, last changed: the folders whose turn
   * it is are read now ({@link FOLDER_STATS_PER_CHECK} at most), the others as their last turn found them.
   */
  async #latestChange(info: Deno.FileInfo): Promise<number> {
    const folders = [...this.#options.folders?.() ?? []];
    const times = this.#folderTimes;
    if (times.size > folders.length) {
      const named = new Set(folders);
      for (const folder of times.keys()) if (!named.has(folder)) times.delete(folder);
    }
    const turn = Math.min(folders.length, FOLDER_STATS_PER_CHECK);
    const start = this.#folderTurn % Math.max(folders.length, 1);
    this.#folderTurn = start + turn;
    const due = Array.from({ length: turn }, (_, i) => folders[(start + i) % folders.length]);
    await Promise.all(
      due.map((folder) =>
        this.#stat(folder).then(entriesChangedAt, () => -Infinity).then((at) => times.set(folder, at))
      ),
    );
    let latest = entriesChangedAt(info);
    for (const folder of folders) latest = Math.max(latest, times.get(folder) ?? -Infinity);
    return latest;
  }

  /**
   * True when the folder's entries changed (at `changedAt`) after the watch was placed and after its last
   * event, at this check and the one before: events arrive within milliseconds of a change, so the watch is
   * stalled.
   */
  #isSilent(changedAt: number): boolean {
    const unreported = changedAt > this.#placedAt && changedAt > this.#lastEventAt;
    const silent = unreported && this.#suspect;
    this.#suspect = unreported && !silent;
    return silent;
  }

  /** Stops checking and closes the watch. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#close();
    await this.#loop;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      void this.check().finally(() => this.#schedule());
    }, this.#options.checkMs ?? 1000);
  }

  async #open(): Promise<void> {
    const path = this.#options.path;
    const root = resolve(path);
    // File times come from the kernel's coarse clock, a tick behind: a change made as the watch was being
    // placed may carry an earlier time. Counting it as after the placement costs at most one needless move.
    const placedAt = Date.now() - COARSE_CLOCK_MS;
    let watcher: IsolatedFsWatcher;
    try {
      watcher = await IsolatedFsWatcher.open(path, this.#options.recursive ?? true);
    } catch (error) {
      // Gone between the stat and the watch, or not permitted: the next check tries again.
      this.#identity = undefined;
      this.#logger.warn(`cannot watch ${path}: ${(error as Error).message}`, { dir: path });
      return;
    }
    if (this.#stopped) {
      watcher.close();
      return;
    }
    this.#watcher = watcher;
    this.#placedAt = placedAt;
    this.#suspect = false;
    this.#loop = (async () => {
      try {
        for await (const event of watcher) {
          this.#lastEventAt = Date.now();
          // Hidden paths matter too: orchestrator volume mounts swap a `..data` link to update every file.
          if (event.kind !== "access") this.#options.onChange(event);
          if (
            (event.kind === "remove" || event.kind === "rename") &&
            event.paths.some((p) => resolve(p) === root)
          ) {
            // The watched folder itself went away: its watch sees nothing more, even if a folder is back at
            // the path before the next check (possibly with the same inode number).
            this.#stale = true;
            void this.check();
          }
        }
      } catch (error) {
        if (!this.#stopped && this.#watcher === watcher) {
          this.#logger.warn(`watch on ${path} ended: ${(error as Error).message}`, { dir: path });
        }
      }
      // A watch that ended on its own is placed again by the next check.
      if (!this.#stopped && this.#watcher === watcher) this.#stale = true;
    })();
  }

  #close(): void {
    const watcher = this.#watcher;
    this.#watcher = undefined;
    try {
      watcher?.close();
    } catch {
      // already closed
    }
  }
}
