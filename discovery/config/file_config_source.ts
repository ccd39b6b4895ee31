import { type Logger, silentLogger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { Resource, SourcePosition } from "@mesh/shared/config/resource";
import { resourceKey } from "@mesh/shared/config/resource";
import type { RejectedConfig } from "../model/config_store.ts";
import { dirname, resolve } from "node:path";
import { scanConfigFiles } from "./config_files.ts";
import { ScanProblems } from "./scan_problems.ts";
import { WriteEvents } from "./write_events.ts";
import { type ConfigFs, denoConfigFs, isInside, readTextBounded } from "./config_fs.ts";
import { filesToReread, pathsNamedBy } from "./named_paths.ts";
import { PathWatch, type PathWatchState } from "./path_watch.ts";
import {
  type ConfigWarning,
  loadConfigTextSliced,
  type LoadedDocument,
  unreadableFile,
} from "./config_file_load.ts";
import { ConfigDirState, type ConfigDirView } from "./config_dir_state.ts";
import { ConfigDirReporter } from "./config_dir_reporter.ts";
import { Debouncer } from "./debouncer.ts";
import { EmptyDirHold } from "./empty_dir_hold.ts";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import { type FileStamp, fileStamp, unchangedSince } from "./file_stamp.ts";
import type { SyncableConfigStore } from "./memory_config_store.ts";
import { LoopSlices } from "@mesh/shared/time/loop_slices";
import { deepFreezeSliced } from "./deep_freeze_sliced.ts";

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
  /** How often the directory's path is checked for a replacement (default 1 s). */
  readonly checkMs?: number;
  /** A changed file is loaded once it has not been modified for this long (default 200 ms). */
  readonly settleMs?: number;
  /**
   * How long the directory must stay without config files before its resources are withdrawn; 0 (the
   * default) keeps them until files are back (`MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER`).
   */
  readonly emptyWithdrawAfterMs?: number;
  /**
   * Largest file read (default 1 MiB, the most an orchestrator ConfigMap holds); a larger one is rejected
   * whole, its last good version kept, so one huge file can neither take the memory nor stall the server.
   */
  readonly maxFileBytes?: number;
  /** Wall clock in milliseconds, compared with file modification times (default `Date.now`). */
  readonly wallClock?: () => number;
  /**
   * After a reload that read only the files the watcher named, the whole tree is compared again this much
   * later (default 1 s), so that a change the kernel's watch did not report is still found.
   */
  readonly verifyMs?: number;
  /** Follow symbolic links out of the directory (`MESHD_CONFIG_DIR_FOLLOW_EXTERNAL_LINKS`, default false). */
  readonly followExternalLinks?: boolean;
  /** Longest a file's read may take before it is given up and its last good version kept (default 10 s). */
  readonly readTimeoutMs?: number;
  /** The file system (the runtime's by default); tests make a folder's read fail through it. */
  readonly fs?: ConfigFs;
}

/** The state of the config directory source, for `/debug/configz`, a metric and readiness. */
export interface ConfigSourceStatus {
  /** The `--configDir` path. */
  readonly dir: string;
  /** `watching` while the directory is there and watched; `lost` while the path names no directory. */
  readonly state: PathWatchState;
  /** When the tree was last read completely (ISO 8601), if ever. */
  readonly lastLoad?: string;
  /** Resources served from the directory. */
  readonly resources: number;
  /** Folders under the directory that could not be read; the config last read from them is kept. */
  readonly unreadable: readonly string[];
  /** Entries named like config files that were not read: not regular files, or links leaving the directory. */
  readonly skipped: readonly string[];
  /** True while the directory has no config file and the config last loaded from it is kept. */
  readonly heldEmpty: boolean;
  /** Files changed so recently that their previous version is still served. */
  readonly settling: readonly string[];
}

/** Identity of a resource this source wrote, to delete it later. */
/** A resource this source wrote to the store: the parsed object it wrote and what the store keeps of it. */
interface Owned {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly written: Resource;
  readonly stored: Resource | undefined;
}

const EMPTY_VIEW: ConfigDirView = { resources: new Map(), rejections: [], warnings: [] };

/**
 * The `--configDir` config source: reads every `.yaml`, `.yml` and `.json` file under a directory (multi-
 * document streams and `List`s), validates each document on its own, and reconciles the result into a
 * config store; then watches the whole tree and does it again after each burst of changes. A bad document
 * is rejected alone (its last good version stays), a half-written file never removes config, a deleted file
 * removes its resources, and duplicates resolve to the first by file name and line.
 *
 * A burst of changes the watcher names file by file (files written or renamed into folders already read) is
 * read alone, and only the resources of those files are written to the store: an edit reaches the store in a
 * few milliseconds instead of the ~70 a walk and re-apply of a thousand-file tree took. Anything else — a folder created,
 * moved or removed, a file removed, a link or hidden `..data` swap, a path outside the folders known, an
 * event the kernel could not name — reads the whole tree, as does a check `verifyMs` after every partial read.
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
  /** Per file, the stamp of the version last read whole (see `file_stamp.ts`). */
  readonly #stamps = new Map<string, FileStamp>();
  #owned = new Map<string, Owned>();
  #view: ConfigDirView = EMPTY_VIEW;
  #listError: string | undefined;
  #chain: Promise<void> = Promise.resolve();
  #queued: Promise<void> | undefined;
  readonly #pathWatch: PathWatch;
  readonly #timers: Timers | undefined;
  readonly #settleMs: number;
  readonly #maxFileBytes: number;
  readonly #wallClock: () => number;
  /** Pending whole-tree reloads by why they were asked for; at most one of each. */
  readonly #laterReloads = new Map<"settle" | "verify", unknown>();
  #settling: string[] = [];
  readonly #problems: ScanProblems;
  readonly #writes: WriteEvents;
  readonly #fs: ConfigFs;
  readonly #followExternalLinks: boolean;
  readonly #readTimeoutMs: number;
  readonly #emptyHold: EmptyDirHold;
  /** Files found missing by a read of the tree, and when (monotonic): see `#forgetWhenGone`. */
  readonly #missingSince = new Map<string, number>();
  #lastLoad: string | undefined;
  #stopped = false;
  #reloads = 0;
  /** Absolute paths the watcher named since the last reload began, or undefined when the tree must be read. */
  #named: Set<string> | undefined;
  /** Known config files by absolute path (the state's keys are paths as the walk spelled them). */
  readonly #known = new Map<string, string>();
  /** The folders holding known files, made again only after a file became known or was forgotten. */
  #knownFolders: Set<string> | undefined;
  readonly #verifyMs: number;

  /** A source over `options.dir`; nothing is read or watched until started. */
  constructor(options: FileConfigSourceOptions) {
    this.#dir = options.dir;
    this.#store = options.store;
    this.#defaultNamespace = options.defaultNamespace;
    this.#logger = options.logger ?? silentLogger;
    this.#reporter = new ConfigDirReporter(this.#logger, options.metrics);
    this.#debouncer = new Debouncer(() => void this.#queueReload(), {
      delayMs: options.debounceMs ?? 100,
      maxDelayMs: options.maxDebounceMs ?? 1000,
      ...(options.timers && { timers: options.timers }),
    });
    this.#timers = options.timers;
    this.#settleMs = options.settleMs ?? 200;
    this.#maxFileBytes = options.maxFileBytes ?? 1024 * 1024;
    this.#wallClock = options.wallClock ?? Date.now;
    this.#writes = new WriteEvents(this.#settleMs, this.#wallClock);
    this.#problems = new ScanProblems(this.#dir, this.#logger, options.metrics);
    this.#verifyMs = options.verifyMs ?? 1000;
    this.#fs = options.fs ?? denoConfigFs;
    this.#followExternalLinks = options.followExternalLinks ?? false;
    this.#readTimeoutMs = options.readTimeoutMs ?? 10_000;
    this.#emptyHold = new EmptyDirHold({
      dir: this.#dir,
      withdrawAfterMs: options.emptyWithdrawAfterMs ?? 0,
      logger: this.#logger,
      ...(options.metrics && { metrics: options.metrics }),
      now: () => (this.#timers ?? systemTimers).now(),
    });
    this.#pathWatch = new PathWatch({
      path: this.#dir,
      onChange: (event) => {
        if (event !== undefined) this.#writes.note(event);
        this.#noteNamed(event);
        this.#debouncer.trigger();
      },
      onState: (state) => this.#stateChanged(state),
      folders: () => this.#knownFolders ??= new Set([...this.#known.keys()].map((file) => dirname(file))),
      logger: this.#logger,
      ...(options.checkMs !== undefined && { checkMs: options.checkMs }),
      ...(options.timers && { timers: options.timers }),
    });
    this.#metrics = options.metrics;
  }

  readonly #metrics: Metrics | undefined;

  /** The watched directory. */
  get dir(): string {
    return this.#dir;
  }

  /** Number of completed reloads, of the whole tree or of the files the watcher named. */
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
    await this.#pathWatch.start();
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

  /** Reads the whole tree now (reloads never overlap; calls made while one waits share it). */
  reload(): Promise<void> {
    this.#named = undefined;
    return this.#queueReload();
  }

  /** Queues a reload of what changed: the files the watcher named, or the whole tree. */
  #queueReload(): Promise<void> {
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
    const timers = this.#timers ?? systemTimers;
    for (const timer of this.#laterReloads.values()) timers.clearTimeout(timer);
    this.#laterReloads.clear();
    await this.#pathWatch.stop();
    await this.#chain;
  }

  /** Where the source stands: watching or lost, last load, skipped folders, files still settling. */
  status(): ConfigSourceStatus {
    return {
      dir: this.#dir,
      state: this.#pathWatch.state,
      ...(this.#lastLoad !== undefined && { lastLoad: this.#lastLoad }),
      resources: this.#view.resources.size,
      unreadable: this.#problems.unreadable,
      skipped: this.#problems.skipped,
      heldEmpty: this.#emptyHold.holding,
      settling: [...this.#settling],
    };
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

  async #reloadOnce(): Promise<void> {
    const named = this.#named;
    this.#named = new Set();
    if (named !== undefined && this.#reloads > 0) {
      const files = await filesToReread(named, this.#known, this.#dir);
      if (files !== undefined) return await this.#reloadFiles(files);
    }
    await this.#reloadTree();
  }

  /** Adds what a watch event names to the next reload, or makes that reload read the whole tree. */
  #noteNamed(event: Deno.FsEvent | undefined): void {
    if (this.#named === undefined) return;
    const paths = pathsNamedBy(event);
    if (paths === undefined) this.#named = undefined;
    else for (const path of paths) this.#named.add(path);
  }

  /** Reads only `files` and writes only the resources whose winner they may have changed. */
  async #reloadFiles(files: readonly string[]): Promise<void> {
    const settling = new Set(this.#settling);
    for (const file of files) {
      if (await this.#read(file) === "settling") settling.add(file);
      else settling.delete(file);
    }
    this.#settling = [...settling].sort();
    if (settling.size > 0) this.#reloadLater("settle", this.#settleMs);
    // The store first: the whole view (every file's rejections and warnings) only reports, after the push
    // that the store's events start is already on its way.
    const touched = this.#state.takeTouched();
    await this.#batch(() => this.#applyTouched(touched));
    const view = this.#state.view();
    this.#view = view;
    this.#reporter.report(view.rejections, view.warnings);
    this.#reloads++;
    this.#reloadLater("verify", this.#verifyMs);
  }

  async #reloadTree(): Promise<void> {
    let files: string[];
    try {
      const scan = await scanConfigFiles(this.#dir, {
        fs: this.#fs,
        followExternalLinks: this.#followExternalLinks,
      });
      files = scan.files;
      this.#listError = undefined;
      this.#problems.update(scan.unreadable, scan.skipped);
    } catch (error) {
      const message = `cannot list config directory ${this.#dir}: ${
        (error as Error).message
      }; keeping the loaded config`;
      if (this.#listError !== message) this.#logger.error(message, { dir: this.#dir });
      this.#listError = message;
      if (this.#reloads === 0) throw new Error(message, { cause: error });
      return;
    }
    const empty = this.#emptyHold.decide(files.length, this.#owned.size);
    if (empty.hold) {
      if (empty.recheckMs !== undefined) this.#reloadLater("settle", empty.recheckMs);
      return;
    }
    const present = new Set(files);
    for (const file of this.#state.files()) {
      if (present.has(file)) this.#missingSince.delete(file);
      // A file under a folder that cannot be read now is not gone: its last good version stays.
      else if (!this.#problems.isUnderUnreadable(file)) this.#forgetWhenGone(file);
    }
    const settling: string[] = [];
    // Stat every file first, many at a time; only files whose identity or modification changed are read.
    const stats = await statAll(this.#fs, files);
    for (const file of files) {
      const info = stats.get(file);
      if (info !== undefined && unchangedSince(this.#stamps.get(file), info)) continue;
      if (await this.#read(file) === "settling") settling.push(file);
    }
    this.#settling = settling;
    if (settling.length > 0) this.#reloadLater("settle", this.#settleMs);
    this.#writes.prune();
    const view = this.#state.view();
    this.#view = view;
    this.#state.takeTouched();
    await this.#batch(() => this.#apply(view.resources));
    this.#reporter.report(view.rejections, view.warnings);
    this.#reloads++;
    this.#lastLoad = new Date(this.#wallClock()).toISOString();
  }

  /**
   * Reads the whole tree `ms` from now: after the settle period of a file still being written, or to check a
   * reload that read only the named files. A reload already pending for the same reason is not doubled.
   */
  #reloadLater(reason: "settle" | "verify", ms: number): void {
    if (this.#laterReloads.has(reason) || this.#stopped) return;
    const timers = this.#timers ?? systemTimers;
    this.#laterReloads.set(
      reason,
      timers.setTimeout(() => {
        this.#laterReloads.delete(reason);
        void this.reload();
      }, ms),
    );
  }

  #stateChanged(state: PathWatchState): void {
    this.#metrics?.gauge("discovery_config_source_lost").set(
      { source: "configDir" },
      state === "lost" ? 1 : 0,
    );
    if (state === "lost") {
      this.#logger.warn(
        `config directory ${this.#dir} (--configDir) is gone; serving the config last loaded from it ` +
          "until a directory is back at that path",
        { dir: this.#dir },
      );
    } else if (this.#reloads > 0) {
      this.#logger.info(`config directory ${this.#dir} is back; reading it again`, { dir: this.#dir });
    }
  }

  /**
   * Reads one file into the state. A file changed less than `settleMs` ago may still be being written: its
   * previous version stays (none, for a new file) and `settling` is returned so the tree is read again.
   */
  async #read(file: string): Promise<"read" | "settling"> {
    let text: string;
    let before: Deno.FileInfo;
    try {
      before = await this.#fs.stat(file);
      const refused = await this.#refusal(file, before);
      if (refused !== undefined) {
        this.#texts.delete(file);
        this.#state.update(unreadableFile(file, 1, [`${file}:1: ${refused}`]));
        return "read";
      }
      if (before.size > this.#maxFileBytes) {
        // Not read at all; the marker keeps an unchanged oversized file from being reported on every reload.
        const marker = `\0oversized:${before.size}:${before.mtime?.getTime()}`;
        this.#stamp(file, before);
        if (this.#texts.get(file) === marker) return "read";
        this.#texts.set(file, marker);
        this.#state.update(unreadableFile(file, 1, [
          `${file}:1: file is ${before.size} bytes, over the ${this.#maxFileBytes}-byte limit of a config ` +
          "file; split it into several files",
        ]));
        return "read";
      }
      text = await readTextBounded(this.#fs, file, this.#readTimeoutMs, this.#timers);
      const changed = this.#texts.get(file) !== text;
      if (changed && this.#reloads > 0 && this.#writes.mayBeInProgress(file, before.mtime?.getTime())) {
        return "settling";
      }
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        this.#forgetWhenGone(file);
        return "read";
      }
      this.#texts.delete(file);
      this.#state.update(
        unreadableFile(file, 1, [`${file}:1: cannot read the file: ${(error as Error).message}`]),
      );
      return "read";
    }
    // Stamped with what was seen before reading: a change during the read makes the next reload read it again.
    this.#stamp(file, before);
    if (this.#texts.get(file) === text) return "read";
    this.#texts.set(file, text);
    // Parsed in slices, and other work runs between files: a large file or tree never stalls `/ready` or xDS.
    this.#state.update(await loadConfigTextSliced(file, text, this.#defaultNamespace));
    await new Promise((resolve) => setTimeout(resolve, 0));
    return "read";
  }

  /**
   * Why `file` is not read, if it is not: it is no regular file (opening a FIFO waits for a writer), or a link
   * leading out of the directory. The walk skips both; this covers a file replaced since the walk.
   */
  async #refusal(file: string, info: Deno.FileInfo): Promise<string | undefined> {
    if (!info.isFile) return "not a regular file (a FIFO, socket or device); not read";
    if (this.#followExternalLinks || !(await this.#fs.lstat(file)).isSymlink) return undefined;
    const [real, root] = await Promise.all([this.#fs.realPath(file), this.#fs.realPath(this.#dir)]);
    if (isInside(real, root)) return undefined;
    return `a link to "${real}", outside the config directory; not read (MESHD_CONFIG_DIR_FOLLOW_EXTERNAL_LINKS)`;
  }

  #stamp(file: string, info: Deno.FileInfo): void {
    this.#stamps.set(file, fileStamp(info, this.#wallClock()));
    const key = resolve(file);
    if (!this.#known.has(key)) this.#knownFolders = undefined;
    this.#known.set(key, file);
  }

  /**
   * Forgets a file found missing once it has been missing for `settleMs`: `rm -rf` of a large tree, the first
   * step of replacing it, removes files one by one for a while, and each removal seen on the way would
   * withdraw routes the copy that follows brings back. Until then the file is read again later.
   */
  #forgetWhenGone(file: string): void {
    const now = (this.#timers ?? systemTimers).now();
    const since = this.#missingSince.get(file) ?? now;
    if (now - since >= this.#settleMs) {
      this.#forget(file);
      return;
    }
    this.#missingSince.set(file, since);
    this.#reloadLater("settle", this.#settleMs - (now - since));
  }

  #forget(file: string): void {
    this.#missingSince.delete(file);
    this.#state.remove(file);
    this.#texts.delete(file);
    this.#stamps.delete(file);
    if (this.#known.delete(resolve(file))) this.#knownFolders = undefined;
  }

  /**
   * Writes a reload's resources as one batch of the store: they go in slices of the event loop, and a push
   * waits for the last one instead of publishing a half-written file.
   */
  #batch(write: () => Promise<void>): Promise<void> {
    return this.#store.batch ? this.#store.batch(write) : write();
  }

  async #apply(resources: ReadonlyMap<string, LoadedDocument>): Promise<void> {
    const owned = new Map<string, Owned>();
    const slices = new LoopSlices();
    for (const [key, doc] of resources) {
      await slices.pause();
      await deepFreezeSliced(doc.resource, slices);
      owned.set(key, this.#write(this.#owned.get(key), doc.resource));
    }
    for (const [key, id] of this.#owned) {
      if (owned.has(key)) continue;
      await slices.pause();
      this.#store.delete(id.kind, id.namespace, id.name);
    }
    this.#owned = owned;
  }

  /**
   * Writes `resource` to the store unless it is the very object written last time and the store still holds
   * what it made of it: a whole-tree read re-offers every resource of the unchanged files, and the store's
   * deep comparison of each allocated some 40 MiB per read at 1000 files.
   */
  #write(last: Owned | undefined, resource: Resource): Owned {
    const { gvk, meta } = resource;
    if (
      last !== undefined && last.written === resource && last.stored !== undefined &&
      this.#store.get(gvk.kind, meta.namespace, meta.name) === last.stored
    ) {
      return last;
    }
    // Frozen in slices by the caller: the store keeps it as it is rather than copying it in one go.
    const stored = this.#store.apply(resource, { handOver: true }) ??
      this.#store.get(gvk.kind, meta.namespace, meta.name);
    return { kind: gvk.kind, namespace: meta.namespace, name: meta.name, written: resource, stored };
  }

  /** Writes the winners of `touched` keys to the store and deletes those that no longer have one. */
  async #applyTouched(touched: ReadonlySet<string>): Promise<void> {
    const slices = new LoopSlices();
    for (const key of [...touched].sort()) {
      await slices.pause();
      const doc = this.#state.winner(key);
      if (doc !== undefined) {
        await deepFreezeSliced(doc.resource, slices);
        this.#owned.set(key, this.#write(this.#owned.get(key), doc.resource));
        continue;
      }
      const id = this.#owned.get(key);
      if (id === undefined) continue;
      this.#owned.delete(key);
      this.#store.delete(id.kind, id.namespace, id.name);
    }
  }
}

/** Stats `files`, 64 at a time; a file that cannot be stat'ed is left out (reading it reports why). */
async function statAll(fs: ConfigFs, files: readonly string[]): Promise<Map<string, Deno.FileInfo>> {
  const out = new Map<string, Deno.FileInfo>();
  for (let i = 0; i < files.length; i += 64) {
    const batch = files.slice(i, i + 64);
    const infos = await Promise.all(batch.map((file) => fs.stat(file).catch(() => undefined)));
    batch.forEach((file, j) => infos[j] !== undefined && out.set(file, infos[j]));
  }
  return out;
}
