/** Log levels in increasing severity; `none` turns a scope off. */
export const LEVELS = ["debug", "info", "warn", "error", "fatal", "none"] as const;

/** One log level name. */
export type Level = typeof LEVELS[number];

/** Numeric rank of a level, for comparisons. */
export function levelRank(level: Level): number {
  return LEVELS.indexOf(level);
}

/** The scope name that, in a `<scope>:<level>` list, applies to every scope. */
export const ALL_SCOPES = "all";

/** The scope used when a list item names no scope (`--log_output_level=debug`). */
export const DEFAULT_SCOPE = "default";

/**
 * Parses `<scope>:<level>` pairs separated by commas (`ads:debug,default:warn`); a bare level applies to `default`.
 * Throws RangeError naming the flag, the bad item and the allowed values.
 */
export function parseScopeLevels(
  text: string,
  scopes: readonly string[],
  flag: string,
): Map<string, Level> {
  const out = new Map<string, Level>();
  if (text.trim() === "") return out;
  for (const item of text.split(",")) {
    const trimmed = item.trim();
    const colon = trimmed.lastIndexOf(":");
    const scope = colon < 0 ? DEFAULT_SCOPE : trimmed.slice(0, colon);
    const level = colon < 0 ? trimmed : trimmed.slice(colon + 1);
    if (!scopes.includes(scope)) {
      throw new RangeError(
        `Invalid ${flag} "${text}": unknown scope "${scope}"; expected one of ${scopes.join(", ")}`,
      );
    }
    if (!(LEVELS as readonly string[]).includes(level)) {
      throw new RangeError(
        `Invalid ${flag} "${text}": unknown level "${level}"; expected one of ${LEVELS.join(", ")}`,
      );
    }
    out.set(scope, level as Level);
  }
  return out;
}

/** Parses a comma-separated scope list (`--log_caller`), checking each name. */
export function parseScopeList(text: string, scopes: readonly string[], flag: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text.split(",")) {
    const scope = raw.trim();
    if (scope === "") continue;
    if (!scopes.includes(scope)) {
      throw new RangeError(
        `Invalid ${flag} "${text}": unknown scope "${scope}"; expected one of ${scopes.join(", ")}`,
      );
    }
    out.add(scope);
  }
  return out;
}
