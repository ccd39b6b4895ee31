/**
 * Checks for settings the agent reads as JSON from one environment variable (`MESH_ORCH_APP_PROBERS`,
 * `MESH_METRICS_ANNOTATIONS`): every error names where the problem is (`VARIABLE["key"].field`), what is
 * expected and what was found, so an operator can fix the setting from the message alone.
 *
 * @module
 */

/** Parses `text`, the value of `variable`, as JSON; a syntax error names the variable and `expected`. */
export function parseJsonSetting(variable: string, text: string, expected: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${variable} is not valid JSON (${(error as Error).message}): expected ${expected}`);
  }
}

/** The error for `value` found at `where` instead of `expected`. */
export function invalidSetting(where: string, expected: string, value: unknown): Error {
  // The value is the operator's own setting, shortened so a huge one does not flood the message.
  const text = JSON.stringify(value) ?? String(value);
  return new Error(
    `${where} is invalid: expected ${expected}, got ${text.length <= 60 ? text : `${text.slice(0, 57)}...`}`,
  );
}

/** `value` as a JSON object, or an error saying `expected` at `where`. */
export function settingObject(value: unknown, where: string, expected: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidSetting(where, expected, value);
  }
  return value as Record<string, unknown>;
}

/**
 * Refuses a field of `value` not in `allowed`, so that a misspelt one (`timeoutseconds`) stops startup
 * instead of silently leaving its default in place.
 */
export function onlySettingFields(
  value: Record<string, unknown>,
  allowed: readonly string[],
  where: string,
): void {
  const unknown = Object.keys(value).find((k) => !allowed.includes(k));
  if (unknown !== undefined) {
    throw new Error(
      `${where} has an unknown field ${JSON.stringify(unknown)}: expected only ${allowed.join(", ")}`,
    );
  }
}
