import type { Logger } from "../log/logger.ts";
import type { EnvSettings } from "./env_settings.ts";
import { NOT_IMPLEMENTED_FLAGS, notImplementedEnv } from "./not_implemented.ts";

/** A variable or flag given at startup that changes nothing in this program. */
export interface IneffectiveSetting {
  /** The variable's name, or the flag as typed (`--plugins`). */
  readonly setting: string;
  /** The issue that will build it, or `none`. */
  readonly issue: string;
  /** Why it does nothing. */
  readonly reason: string;
}

/** The settings marked as not implemented that `env` or the explicit flags of `command` set, in that order. */
export function ineffectiveSettings(
  env: EnvSettings,
  command: string,
  explicitFlags: ReadonlySet<string>,
): IneffectiveSetting[] {
  const out: IneffectiveSetting[] = [];
  for (const variable of env.resolved()) {
    const mark = variable.source === "environment"
      ? notImplementedEnv(env.program, variable.name)
      : undefined;
    if (mark !== undefined) out.push({ setting: variable.name, issue: mark.issue, reason: mark.reason });
  }
  for (const flag of NOT_IMPLEMENTED_FLAGS) {
    if (flag.command !== command || !flag.programs.includes(env.program) || !explicitFlags.has(flag.name)) {
      continue;
    }
    out.push({ setting: `--${flag.name}`, issue: flag.issue, reason: flag.reason });
  }
  return out;
}

/** Logs one warning for each setting given that has no effect, naming it. */
export function warnIneffectiveSettings(
  log: Logger,
  env: EnvSettings,
  command: string,
  explicitFlags: ReadonlySet<string>,
): void {
  for (const { setting, issue, reason } of ineffectiveSettings(env, command, explicitFlags)) {
    log.warn(`${setting} is set but has no effect: ${reason}`, { setting, issue });
  }
}
