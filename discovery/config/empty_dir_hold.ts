import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";

/** Options of {@link EmptyDirHold}. */
export interface EmptyDirHoldOptions {
  /** The config directory, for log lines. */
  readonly dir: string;
  /**
   * How long the directory must stay empty before its resources are withdrawn; 0 (the default of
   * `MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER`) keeps them until files are back.
   */
  readonly withdrawAfterMs: number;
  readonly logger: Logger;
  readonly metrics?: Metrics;
  /** Monotonic milliseconds. */
  readonly now: () => number;
}

/** What to do with a read of the tree that found no config file. */
export type EmptyDecision =
  | { readonly hold: false }
  | { readonly hold: true; readonly recheckMs?: number };

/**
 * Keeps the config last loaded from a directory found empty. A directory replaced by a deploy script
 * (`rm -rf`, `mkdir`, copy) passes through empty, as does one whose volume is being remounted; withdrawing
 * every resource then would withdraw every route of the fleet. The reference withdraws at once; here the
 * last config stays until files are back, or, when the operator opts in, until the directory has stayed
 * empty for `withdrawAfterMs`. Holding is logged once and shown in `discovery_config_source_held_empty`.
 */
export class EmptyDirHold {
  readonly #options: EmptyDirHoldOptions;
  #emptySince: number | undefined;

  /** A hold for `options.dir`; nothing is held until {@link decide} finds the directory empty. */
  constructor(options: EmptyDirHoldOptions) {
    this.#options = options;
  }

  /** True while an empty directory's last config is kept. */
  get holding(): boolean {
    return this.#emptySince !== undefined;
  }

  /** Decides for a read that found `files` config files while `served` resources are served from the tree. */
  decide(files: number, served: number): EmptyDecision {
    if (files > 0 || served === 0) {
      this.#release();
      return { hold: false };
    }
    const { dir, withdrawAfterMs, logger, now } = this.#options;
    if (this.#emptySince === undefined) {
      this.#emptySince = now();
      this.#gauge(1);
      logger.warn(
        `config directory ${dir} has no config file; keeping the ${served} resources last loaded from it ` +
          (withdrawAfterMs === 0
            ? "until files are back (MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER=0s)"
            : `until files are back or it has stayed empty for ${withdrawAfterMs} ms ` +
              "(MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER)"),
        { dir, resources: served },
      );
    }
    if (withdrawAfterMs === 0) return { hold: true };
    const left = this.#emptySince + withdrawAfterMs - now();
    if (left > 0) return { hold: true, recheckMs: left };
    this.#release();
    this.#options.metrics?.counter("discovery_config_source_empty_withdrawals").inc({ source: "configDir" });
    logger.warn(
      `config directory ${dir} has stayed empty for ${withdrawAfterMs} ms ` +
        `(MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER); withdrawing the ${served} resources loaded from it`,
      { dir, resources: served },
    );
    return { hold: false };
  }

  #release(): void {
    if (this.#emptySince === undefined) return;
    this.#emptySince = undefined;
    this.#gauge(0);
  }

  #gauge(value: number): void {
    this.#options.metrics?.gauge("discovery_config_source_held_empty").set({ source: "configDir" }, value);
  }
}
