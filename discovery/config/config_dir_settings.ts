import type { EnvSettings } from "@mesh/shared/env/env_settings";

/** The environment settings of the `--configDir` source. */
export interface ConfigDirSettings {
  /** `MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER` in milliseconds; 0: an empty directory never withdraws config. */
  readonly emptyWithdrawAfterMs: number;
  /** `MESHD_CONFIG_DIR_FOLLOW_EXTERNAL_LINKS`: whether links may lead out of the directory. */
  readonly followExternalLinks: boolean;
}

/** Reads the `--configDir` source's settings from the env registry (ranges are checked there). */
export function configDirSettingsFromEnv(env: EnvSettings): ConfigDirSettings {
  return Object.freeze({
    emptyWithdrawAfterMs: env.durationMs("MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER"),
    followExternalLinks: env.bool("MESHD_CONFIG_DIR_FOLLOW_EXTERNAL_LINKS"),
  });
}
