import { childPath, type ValidationReport } from "../validation/report.ts";
import { objectAt, stringAt } from "../validation/fields.ts";
import { checkRe2 } from "../validation/regex.ts";

/** How a string is matched: exactly one of exact, prefix or an RE2 regex (none: the value must be present). */
export interface StringMatch {
  /** The whole value must equal this. */
  readonly exact?: string;
  /** The value must start with this. */
  readonly prefix?: string;
  /** The value must match this RE2 regular expression. */
  readonly regex?: string;
}

const KINDS = ["exact", "prefix", "regex"] as const;

/** Validates a StringMatch (one-of exact/prefix/regex; regex in RE2 syntax) and returns it. */
export function stringMatchAt(
  report: ValidationReport,
  path: string,
  value: unknown,
): StringMatch | undefined {
  const obj = objectAt(report, path, value, KINDS);
  if (obj === undefined) return undefined;
  const set = KINDS.filter((k) => obj[k] !== undefined && obj[k] !== null);
  if (set.length > 1) report.error(path, `only one of ${set.join(", ")} may be set`);
  for (const k of KINDS) stringAt(report, childPath(path, k), obj[k]);
  if (typeof obj.regex === "string") {
    const problem = checkRe2(obj.regex);
    if (problem) report.error(childPath(path, "regex"), problem);
  }
  return obj as StringMatch;
}

/** The matched text of a StringMatch, whichever kind is set ("" when none). */
export function stringMatchValue(match: StringMatch): string {
  return match.exact ?? match.prefix ?? match.regex ?? "";
}
