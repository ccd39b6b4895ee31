import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, describe } from "../validation/fields.ts";
import { checkIpSubnet } from "../validation/ip.ts";

/** How the values of a match list are read: plain strings with wildcards, IPs/CIDRs, or port numbers. */
export type MatchValueKind = "string" | "ip" | "port";

const PORT_DIGITS = /^[0-9]+$/;
const MAX_PORT = 65535;

/**
 * Checks a string match value for the wildcard forms the proxy understands: `*` alone (any value present),
 * a leading `*` (suffix match) or a trailing `*` (prefix match). Any other `*` is compared literally by the
 * proxy, which is never what was meant. Returns a message when invalid.
 */
export function checkWildcard(value: string): string | undefined {
  const stars = value.split("*").length - 1;
  if (stars === 0) return undefined;
  if (stars === 1 && (value.startsWith("*") || value.endsWith("*"))) return undefined;
  return `wildcard "*" is only supported alone or as the first or last character, got "${value}"`;
}

/** Checks a port given as a decimal string, as the security API writes ports; returns a message when invalid. */
export function checkPortString(value: string): string | undefined {
  if (!PORT_DIGITS.test(value) || Number(value) > MAX_PORT) {
    return `must be a port number between 0 and ${MAX_PORT}, got "${value}"`;
  }
  return undefined;
}

/**
 * Reads a list of match values at `path` (`principals`, `ipBlocks`, `ports`, condition `values`…): every item
 * must be a non-empty string valid for `kind`. Errors name the item's index. Returns the string items; an
 * absent list reads as empty, as in the API.
 */
export function matchValuesAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  kind: MatchValueKind,
): string[] {
  const out: string[] = [];
  arrayAt(report, path, value).forEach((item, i) => {
    const at = childPath(path, i);
    if (typeof item !== "string") {
      const hint = kind === "port" && typeof item === "number" ? `; quote port numbers, e.g. "${item}"` : "";
      report.error(at, `must be a string, got ${describe(item)}${hint}`);
      return;
    }
    out.push(item);
    if (item === "") {
      report.error(at, "empty value not allowed");
      return;
    }
    const problem = kind === "ip"
      ? checkIpSubnet(item)
      : kind === "port"
      ? checkPortString(item)
      : checkWildcard(item);
    if (problem) report.error(at, problem);
    else if (kind === "port" && Number(item) === 0) report.warn(at, "port 0 never matches a request");
  });
  return out;
}
