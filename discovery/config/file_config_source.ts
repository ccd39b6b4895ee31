import { type Logger, silentLogger } from "../../shared/log/logger.ts";
import type { Metrics } from "../../shared/metrics/metrics.ts";
import type { SourcePosition } from "../../shared/config/resource.ts";
import { resourceKey } from "../../shared/config/resource.ts";
import type { RejectedConfig } from "../model/config_store.ts";
import { listConfigFiles } from "./config_files.ts";
import {
  type ConfigWarning,
  loadConfigText,
  type LoadedDocument,
  unreadableFile,
} from "./config_file_load.ts";
import { ConfigDirState, type ConfigDirView } from "./config_dir_state.ts";
import { ConfigDirReporter } from "./config_dir_reporter.ts";
import { Debouncer, type Timers } from "./debouncer.ts";
import type { SyncableConfigStore } from "./memory_config_store.ts";

/** Options of {@link FileConfigSource}. */
export interface FileConfigSourceOptions {
  /** The `--configDir` directory, read recursively. */
  readonly dir: string;
  /** Where the resources go; marked synced after the first full load. */
  readonly store: SyncableConfigStore;
  /** Namespace of documents without `metadata.namespace` (discovery passes "default"). */
  readonly defaultNamespace: string;
  /** Where loads, rejections and watch problems are logged; silent when absent. */
  readonly logger?: Logger;
  /** Counts rejections in `discovery_total_rejected_configs` and `config_validation_failed`. */
  readonly metrics?: Metrics;
  /** Quiet period after a change before the tree is read again (default 100 ms). */
  readonly debounceMs?: number;
  /** Longest a burst of changes can postpone a reload (default 1 s). */
  readonly maxDebounceMs?: number;
  /** Timers of the debounce; a fake clock in tests. */
  readonly timers?: Timers;
}

/** Identity of a resource this source wrote, to delete it later. */
interface Owned {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

const EMPTY_VIEW: ConfigDirView = { resources: new Map(), rejections: [], warnings: [] };

/**
 * The `--configDir` config source: reads every `.yaml`, `.yml` and `.json` file under a directory (multi-
 * document streams and `List`s), validates each document on its own, and reconciles the result into a
 * config store; then watches the whole tree and does it again after each burst of changes. A bad document
 * is rejected alone (its last good version stays), a half-written file never removes config, a deleted file
 * removes its resources, and duplicates resolve to the first by file name and line.
 */
export class FileConfigSource {
  readonly #dir: string;
  readonly #store: SyncableConfigStore;
  readonly #defaultNamespace: string;
  readonly #logger: Logger;
  readonly #reporter: ConfigDirReporter;
  readonly #debouncer: Debouncer;
  readonly #state = new ConfigDirState();
  readonly #texts = new Map<string, string>();
  #owned = new Map<string, Owned>();
  #view: ConfigDirView = EMPTY_VIEW;
  #listError: string | undefined;
  #chain: Promise<void> = Promise.resolve();
  #queued: Promise<void> | undefined;
  #watcher: Deno.FsWatcher | undefined;
  #watchLoop: Promise<void> | undefined;
  #stopped = false;
  #reloads = 0;

  /** A source over `options.dir`; nothing is read or watched until started. */
  constructor(options: FileConfigSourceOptions) {
    this.#dir = options.dir;
    this.#store = options.store;
    this.#defaultNamespace = options.defaultNamespace;
    this.#logger = options.logger ?? silentLogger;
    this.#reporter = new ConfigDirReporter(this.#logger, options.metrics);
    this.#debouncer = new Debouncer(() => void this.reload(), {
      delayMs: options.debounceMs ?? 100,
      maxDelayMs: options.maxDebounceMs ?? 1000,
      ...(options.timers && { timers: options.timers }),
    });
  }

  /** The watched directory. */
  get dir(): string {
    return this.#dir;
  }

  /** Number of completed reads of the tree. */
  get reloads(): number {
    return this.#reloads;
  }

  /**
   * Starts watching, loads the whole tree once, and marks the store synced. Throws when the directory
   * cannot be read.
   */
  async start(): Promise<void> {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(this.#dir);
    } catch (error) {
      throw new Error(
        `Cannot read config directory "${this.#dir}" (--configDir): ${(error as Error).message}; ` +
          "expected an existing directory of YAML files",
        { cause: error },
      );
    }
    if (!info.isDirectory) {
      throw new Error(
        `Config directory "${this.#dir}" (--configDir) is not a directory; expected a directory of YAML files`,
      );
    }
    // Watch before the first read so that a change made during it is not lost.
    this.#watch();
    try {
      await this.reload();
    } catch (error) {
      await this.stop();
      throw error;
    }
    this.#store.markSynced();
    const view = this.#view;
    this.#logger.info(`loaded ${view.resources.size} resources from ${this.#dir}`, {
      dir: this.#dir,
      resources: view.resources.size,
      rejected: view.rejections.length,
    });
  }

  /** Reads the tree now (reloads never overlap; calls made while one waits share it). */
  reload(): Promise<void> {
    if (this.#queued) return this.#queued;
    const run = this.#chain.then(() => {
      this.#queued = undefined;
      return this.#stopped ? undefined : this.#reloadOnce();
    });
    this.#queued = run;
    this.#chain = run.catch(() => {});
    return run;
  }

  /** Stops watching and waits for a reload in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#debouncer.cancel();
    try {
      this.#watcher?.close();
    } catch {
      // already closed
    }
    await this.#watchLoop;
    await this.#chain;
  }

  /** Documents currently refused, for `/debug/configz`, sorted by file and line. */
  rejected(): RejectedConfig[] {
    return this.#view.rejections.map((r) => ({
      file: r.file,
      line: r.line,
      ...(r.kind !== undefined && { kind: r.kind }),
      ...(r.namespace !== undefined && { namespace: r.namespace }),
      ...(r.name !== undefined && { name: r.name }),
      errors: [...r.errors],
    }));
  }

  /** Current warnings: validation warnings, duplicates, and stale versions still served. */
  warnings(): ConfigWarning[] {
    return [...this.#view.warnings];
  }

  /** Where the served version of a resource was read from, if this source serves it. */
  origin(kind: string, namespace: string, name: string): SourcePosition | undefined {
    const doc = this.#view.resources.get(resourceKey(kind, namespace, name));
    return doc && { file: doc.file, line: doc.line };
  }

  #watch(): void {
    const watcher = Deno.watchFs(this.#dir, { recursive: true });
    this.#watcher = watcher;
    this.#watchLoop = (async () => {
      try {
        for await (const event of watcher) {
          // Hidden paths matter too: orchestrator volume mounts swap a `..data` link to update every file.
          if (event.kind !== "access") this.#debouncer.trigger();
        }
      } catch (error) {
        if (!this.#stopped) {
          this.#logger.error(`stopped watching config directory ${this.#dir}: ${(error as Error).message}`);
        }
      }
    })();
  }

  async #reloadOnce(): Promise<void> {
    let files: string[];
    try {
      files = await listConfigFiles(this.#dir);
      this.#listError = undefined;
    } catch (error) {
      const message = `cannot list config directory ${this.#dir}: ${
        (error as Error).message
      }; keeping the loaded config`;
      if (this.#listError !== message) this.#logger.error(message, { dir: this.#dir });
      this.#listError = message;
      if (this.#reloads === 0) throw new Error(message, { cause: error });
      return;
    }
    const present = new Set(files);
    for (const file of this.#state.files()) {
      if (!present.has(file)) this.#forget(file);
    }
    for (const file of files) await this.#read(file);
    const view = this.#state.view();
    this.#view = view;
    this.#apply(view.resources);
    this.#reporter.report(view.rejections, view.warnings);
    this.#reloads++;
  }

  async #read(file: string): Promise<void> {
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        this.#forget(file);
        return;
      }
      this.#texts.delete(file);
      this.#state.update(
        unreadableFile(file, 1, [`${file}:1: cannot read the file: ${(error as Error).message}`]),
      );
      return;
    }
    if (this.#texts.get(file) === text) return;
    this.#texts.set(file, text);
    this.#state.update(loadConfigText(file, text, this.#defaultNamespace));
  }

  #forget(file: string): void {
    this.#state.remove(file);
    this.#texts.delete(file);
  }

  #apply(resources: ReadonlyMap<string, LoadedDocument>): void {
    const owned = new Map<string, Owned>();
    for (const [key, doc] of resources) {
      const { gvk, meta } = doc.resource;
      owned.set(key, { kind: gvk.kind, namespace: meta.namespace, name: meta.name });
      this.#store.apply(doc.resource);
    }
    for (const [key, id] of this.#owned) {
      if (!owned.has(key)) this.#store.delete(id.kind, id.namespace, id.name);
    }
    this.#owned = owned;
  }
}
