import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { SkippedPath, UnreadablePath } from "./config_files.ts";

/**
 * What the last walk of a config directory could not read: folders it could not list (their config last read
 * is kept) and entries it would not read (not regular files, links leaving the directory). Each new one is
 * logged once; the counts are in `discovery_config_source_unreadable_paths` and
 * `discovery_config_source_skipped_paths`.
 */
export class ScanProblems {
  readonly #dir: string;
  readonly #logger: Logger;
  readonly #metrics: Metrics | undefined;
  #unreadable: readonly UnreadablePath[] = [];
  #skipped: readonly SkippedPath[] = [];

  /** Problems of the walks of `dir`. */
  constructor(dir: string, logger: Logger, metrics?: Metrics) {
    this.#dir = dir;
    this.#logger = logger;
    this.#metrics = metrics;
  }

  /** Unreadable folders as `path: reason`, for `/debug/configz`. */
  get unreadable(): string[] {
    return this.#unreadable.map((u) => `${u.path}: ${u.reason}`);
  }

  /** Entries not read as `path: what it is`, for `/debug/configz`. */
  get skipped(): string[] {
    return this.#skipped.map((s) => `${s.path}: ${s.detail}`);
  }

  /** True when `file` lies under a folder the last walk could not read. */
  isUnderUnreadable(file: string): boolean {
    return this.#unreadable.some((folder) => file.startsWith(`${folder.path}/`));
  }

  /** Records the problems of a walk, logging those that are new. */
  update(unreadable: readonly UnreadablePath[], skipped: readonly SkippedPath[]): void {
    const known = new Set(this.unreadable);
    for (const entry of unreadable) {
      const text = `${entry.path}: ${entry.reason}`;
      if (known.has(text)) continue;
      this.#logger.error(
        `cannot read folder under the config directory: ${text}; keeping the config last read from it`,
        { dir: this.#dir, folder: entry.path },
      );
    }
    const seen = new Set(this.skipped);
    for (const entry of skipped) {
      if (seen.has(`${entry.path}: ${entry.detail}`)) continue;
      this.#logger.warn(`not reading ${entry.path} under the config directory: ${entry.detail}`, {
        dir: this.#dir,
        file: entry.path,
        reason: entry.reason,
      });
    }
    this.#unreadable = unreadable;
    this.#skipped = skipped;
    this.#metrics?.gauge("discovery_config_source_unreadable_paths").set(
      { source: "configDir" },
      unreadable.length,
    );
    const gauge = this.#metrics?.gauge("discovery_config_source_skipped_paths");
    for (const reason of ["not_regular", "outside_tree"] as const) {
      gauge?.set({ source: "configDir", reason }, skipped.filter((s) => s.reason === reason).length);
    }
  }
}
