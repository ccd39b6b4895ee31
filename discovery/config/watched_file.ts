import type { Logger } from "@mesh/shared/log/logger";
import { MeshConfigError } from "@mesh/shared/config/mesh/mesh_config_error";
import { deepEqual } from "./deep_equal.ts";
import { Debouncer } from "./debouncer.ts";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import { denoConfigFs, readTextBounded } from "./config_fs.ts";
import { PathWatch } from "./path_watch.ts";

/** Largest mesh config file read: the most an orchestrator ConfigMap holds; real ones are a few KiB. */
export const MAX_MESH_FILE_BYTES = 1024 * 1024;

/** Longest a read of the file may take before it is given up and the current value kept. */
const READ_TIMEOUT_MS = 10_000;

/** Options of {@link WatchedFile}. */
export interface WatchedFileOptions<T> {
  /** What the file holds, for log lines (`mesh config`). */
  readonly label: string;
  readonly path: string;
  /** Parses the file's text; throws {@link MeshConfigError} (or any error) when it is unusable. */
  readonly parse: (text: string, file: string) => { readonly value: T; readonly warnings: readonly string[] };
  /** The value while the file has never been loaded. */
  readonly initial: T;
  /** Called when the file, once loaded, goes missing (true) and when it is back (false). */
  readonly onLost?: (lost: boolean) => void;
  /** Called with each new effective value (never for a value equal to the current one). */
  readonly onChange: (value: T) => void;
  readonly logger: Logger;
  readonly debounceMs: number;
  /** How often to look for the parent directory while it does not exist. */
  readonly dirPollMs: number;
  readonly timers?: Timers;
}

/**
 * One config file watched through its parent directory, so that it may appear later, be replaced by a
 * rename, or be a symbolic link into an orchestrator volume's `..data` folder. A bad or removed file keeps
 * the last good value; every distinct problem is logged once.
 */
export class WatchedFile<T> {
  readonly #options: WatchedFileOptions<T>;
  readonly #debouncer: Debouncer;
  readonly #timers: Timers;
  #value: T;
  #loadedFromFile = false;
  #lost = false;
  #lastText: string | undefined;
  #errors: readonly string[] = [];
  #lastLogged: string | undefined;
  #warningsLogged = "";
  readonly #pathWatch: PathWatch;
  #chain: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(options: WatchedFileOptions<T>) {
    this.#options = options;
    this.#value = options.initial;
    this.#timers = options.timers ?? systemTimers;
    this.#debouncer = new Debouncer(() => void this.load(), {
      delayMs: options.debounceMs,
      ...(options.timers && { timers: options.timers }),
    });
    const { path } = options;
    const slash = path.lastIndexOf("/");
    const base = path.slice(slash + 1);
    // The folder is watched by path: replaced, removed and recreated, or swapped, the watch follows it.
    this.#pathWatch = new PathWatch({
      path: slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash),
      recursive: false,
      onChange: (event) => {
        // `..data` is the link an orchestrator volume swaps to replace every file of the mount at once.
        const relevant = event === undefined || event.paths.some((p) => {
          const name = p.slice(p.lastIndexOf("/") + 1);
          return name === base || name.startsWith("..");
        });
        if (relevant) this.#debouncer.trigger();
      },
      checkMs: options.dirPollMs,
      logger: options.logger,
      ...(options.timers && { timers: options.timers }),
    });
  }

  /** The watched file. */
  get path(): string {
    return this.#options.path;
  }

  /** The effective value: the last good content of the file, or the initial value. */
  get value(): T {
    return this.#value;
  }

  /** Problems with the file's current content (empty when it loaded or is simply missing). */
  get errors(): readonly string[] {
    return this.#errors;
  }

  /** True while a file that was loaded is missing: its last config is still served. */
  get lost(): boolean {
    return this.#lost;
  }

  /** True once the file has been loaded successfully at least once. */
  get loaded(): boolean {
    return this.#loadedFromFile;
  }

  /** Starts watching the parent directory (or looking for it until it exists); resolves once placed. */
  start(): Promise<void> {
    return this.#pathWatch.start();
  }

  /** Reads the file now; reads never overlap. */
  load(): Promise<void> {
    const run = this.#chain.then(() => this.#stopped ? undefined : this.#loadOnce());
    this.#chain = run.catch(() => {});
    return run;
  }

  /** Stops watching and waits for a read in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#debouncer.cancel();
    await this.#pathWatch.stop();
    await this.#chain;
  }

  #setLost(lost: boolean): void {
    if (lost === this.#lost) return;
    this.#lost = lost;
    this.#options.onLost?.(lost);
  }

  async #loadOnce(): Promise<void> {
    const { label, path, logger } = this.#options;
    let text: string;
    try {
      const { size, isFile } = await Deno.stat(path);
      if (!isFile) {
        // Opening a FIFO waits for a writer: only regular files are read.
        this.#errors = [`${path}: not a regular file (a folder, FIFO, socket or device)`];
        this.#logOnce(this.#errors[0], "error", `${label} file ${path} is not a regular file; not read`);
        return;
      }
      if (size > MAX_MESH_FILE_BYTES) {
        this.#errors = [`${path}: file is ${size} bytes, over the ${MAX_MESH_FILE_BYTES}-byte limit`];
        this.#logOnce(
          this.#errors[0],
          "error",
          `${label} file ${path} is ${size} bytes, over the ${MAX_MESH_FILE_BYTES}-byte limit; not read, ` +
            `keeping the current ${label}`,
        );
        return;
      }
      text = await readTextBounded(denoConfigFs, path, READ_TIMEOUT_MS, this.#timers);
      this.#setLost(false);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        this.#setLost(this.#loadedFromFile);
        this.#errors = [];
        this.#lastText = undefined;
        if (this.#loadedFromFile) {
          this.#logOnce(
            "removed",
            "warn",
            `${label} file ${path} was removed; keeping the config last loaded from it`,
          );
        } else {
          this.#logOnce("missing", "info", `${label} file ${path} not found; using the default ${label}`);
        }
        return;
      }
      this.#errors = [`${path}: cannot read the file: ${(error as Error).message}`];
      this.#logOnce(
        this.#errors[0],
        "error",
        `cannot read ${label} file ${path}: ${(error as Error).message}; keeping the current ${label}`,
      );
      return;
    }
    if (text === this.#lastText) return;
    this.#lastText = text;
    if (text.length === 0 && this.#loadedFromFile) {
      // An in-place write caught between truncation and write looks like this; never fall back to defaults.
      this.#logOnce(
        "empty",
        "warn",
        `${label} file ${path} is empty; keeping the config last loaded from it`,
      );
      return;
    }
    let parsed: { value: T; warnings: readonly string[] };
    try {
      parsed = this.#options.parse(text, path);
    } catch (error) {
      this.#errors = error instanceof MeshConfigError
        ? error.issues
        : [`${path}: ${(error as Error).message}`];
      this.#logOnce(
        this.#errors.join("\n"),
        "error",
        `invalid ${label} file ${path}; keeping the ${
          this.#loadedFromFile ? "last good" : "default"
        } ${label}: ` +
          this.#errors.join("; "),
      );
      return;
    }
    this.#errors = [];
    const warnings = parsed.warnings.join("\n");
    if (warnings !== "" && warnings !== this.#warningsLogged) {
      logger.warn(`${label} file ${path}: ${parsed.warnings.join("; ")}`, { file: path });
    }
    this.#warningsLogged = warnings;
    this.#loadedFromFile = true;
    this.#lastLogged = undefined;
    if (deepEqual(parsed.value, this.#value)) return;
    this.#value = parsed.value;
    logger.info(`loaded ${label} from ${path}`, { file: path });
    this.#options.onChange(parsed.value);
  }

  #logOnce(signature: string, level: "info" | "warn" | "error", message: string): void {
    if (this.#lastLogged === signature) return;
    this.#lastLogged = signature;
    this.#options.logger[level](message, { file: this.#options.path });
  }
}
