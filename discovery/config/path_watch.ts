import { type Logger, silentLogger } from "../../shared/log/logger.ts";
import { systemTimers, type Timers } from "../../shared/time/timers.ts";

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
  readonly logger?: Logger;
  readonly timers?: Timers;
}

/** The identity of what a path names: device and inode, following links. */
function identityOf(info: Deno.FileInfo): string {
  return `${info.dev}:${info.ino}`;
}

/**
 * Watches a directory by its path rather than by its inode. A kernel watch follows the inode it was placed
 * on, so a directory renamed away and replaced, removed and recreated, or a symbolic link swapped to another
 * folder would leave it watching something nobody edits any more. Here the path is checked every `checkMs`:
 * when it names another directory the watch moves there and `onChange` runs; when it names nothing the state
 * is `lost` until it is back.
 */
export class PathWatch {
  readonly #options: PathWatchOptions;
  readonly #timers: Timers;
  readonly #logger: Logger;
  #identity: string | undefined;
  #watcher: Deno.FsWatcher | undefined;
  #loop: Promise<void> = Promise.resolve();
  #timer: unknown;
  #state: PathWatchState = "lost";
  #checking = false;
  #started = false;
  #stopped = false;

  /** A watch over `options.path`; nothing happens until started. */
  constructor(options: PathWatchOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
    this.#logger = options.logger ?? silentLogger;
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
      try {
        const info = await Deno.stat(this.#options.path);
        identity = info.isDirectory ? identityOf(info) : undefined;
      } catch {
        identity = undefined;
      }
      if (identity === this.#identity || this.#stopped) return;
      this.#identity = identity;
      // The old watch must be fully torn down first: a new watch opened on the same path while the old one
      // is still closing receives no events.
      this.#close();
      await this.#loop;
      if (identity !== undefined && !this.#stopped) this.#open();
      const state: PathWatchState = identity === undefined || !this.#watcher ? "lost" : "watching";
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

  #open(): void {
    const path = this.#options.path;
    let watcher: Deno.FsWatcher;
    try {
      watcher = Deno.watchFs(path, { recursive: true });
    } catch (error) {
      // Gone between the stat and the watch, or not permitted: the next check tries again.
      this.#identity = undefined;
      this.#logger.warn(`cannot watch ${path}: ${(error as Error).message}`, { dir: path });
      return;
    }
    this.#watcher = watcher;
    this.#loop = (async () => {
      try {
        for await (const event of watcher) {
          // Hidden paths matter too: orchestrator volume mounts swap a `..data` link to update every file.
          if (event.kind !== "access") this.#options.onChange(event);
        }
      } catch (error) {
        if (!this.#stopped && this.#watcher === watcher) {
          this.#logger.warn(`watch on ${path} ended: ${(error as Error).message}`, { dir: path });
        }
      }
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
