/**
 * The built-in functions of `go_template.ts`: Go's `text/template` ones, plus `toJSON`, `toJson` and `default`.
 * @module
 */
import { formatValue, sprintf } from "./go_printf.ts";

/** Functions by name, as the runner calls them. */
export type Functions = Readonly<Record<string, (...args: unknown[]) => unknown>>;

/** Go's truth: false, 0, "", nil and empty lists and maps are false. */
export function truthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === "") return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

function sprint(args: unknown[]): string {
  return args.map((arg, i) =>
    (i > 0 && typeof arg !== "string" && typeof args[i - 1] !== "string" ? " " : "") + formatValue(arg)
  ).join("");
}

/** Go's `js` escaping (`template.JSEscapeString`): quotes, backslash, `<>&=` and control characters. */
function jsEscape(text: string): string {
  let out = "";
  for (const c of text) {
    if (c === "\\" || c === "'" || c === '"') out += `\\${c}`;
    else if ("<>&=".includes(c) || c.charCodeAt(0) < 0x20) {
      out += `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
    } else out += c;
  }
  return out;
}

const compare = (a: unknown, b: unknown) =>
  (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;

/** The functions every template has: Go's built-ins and the few the bootstrap templates use. */
export const BUILTIN_FUNCTIONS: Functions = {
  and: (...args) => args.find((a) => !truthy(a)) ?? args.at(-1),
  or: (...args) => args.find((a) => truthy(a)) ?? args.at(-1),
  not: (a) => !truthy(a),
  eq: (a, ...rest) => rest.some((b) => a === b),
  ne: (a, b) => a !== b,
  lt: (a, b) => compare(a, b) < 0,
  le: (a, b) => compare(a, b) <= 0,
  gt: (a, b) => compare(a, b) > 0,
  ge: (a, b) => compare(a, b) >= 0,
  len: (a) => Array.isArray(a) || typeof a === "string" ? a.length : Object.keys(a ?? {}).length,
  index: (a, ...keys) =>
    keys.reduce((v: unknown, k) => (v as Record<string, unknown> | undefined)?.[k as string], a),
  // Go's fmt.Sprint: a space between two operands when neither is a string.
  print: (...args) => sprint(args),
  printf: (format, ...args) => {
    if (typeof format !== "string") {
      throw new TypeError(`the format must be a string, not ${formatValue(format)}`);
    }
    return sprintf(format, args);
  },
  js: (...args) => jsEscape(sprint(args)),
  // Istio's toJSON writes nil as an empty object; sprig's toJson (newer Istio templates) writes null.
  toJSON: (a) => a === undefined || a === null ? "{}" : JSON.stringify(a),
  toJson: (a) => JSON.stringify(a ?? null),
  default: (fallback, value) => truthy(value) ? value : fallback,
};
