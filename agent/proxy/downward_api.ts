/**
 * The orchestrator's downward-API files (`./etc/mesh/pod/labels`, `./etc/mesh/pod/annotations`): one
 * `key="value"` a line, the value quoted as Go's `%q` writes it. The one parser of both files.
 *
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import { readIfExists } from "./read_if_exists.ts";

/** A downward-API file: its values by key, and the lines that were not `key="value"`. */
export interface DownwardApiFile {
  readonly values: Readonly<Record<string, string>>;
  /** One-based numbers of the lines left out: no `=`, or a value that is not a Go quoted string. */
  readonly badLines: readonly number[];
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  '"': '"',
};

/** Escapes with a fixed number of hex digits after them: `\xHH` (a byte), `\uHHHH`, `\UHHHHHHHH`. */
const HEX_DIGITS: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

/**
 * Parses a downward-API file as the reference does (`ParseDownwardAPI`: each line split at its first `=`, the
 * value unquoted as Go's `strconv.Unquote`), except that a bad line is left out and reported instead of
 * failing the whole file. Blank lines are skipped.
 */
export function parseDownwardApi(text: string): DownwardApiFile {
  const values: Record<string, string> = {};
  const badLines: number[] = [];
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    const equals = line.indexOf("=");
    const value = equals < 0 ? undefined : unquoteGo(line.slice(equals + 1));
    if (value === undefined) badLines.push(index + 1);
    else values[line.slice(0, equals)] = value;
  });
  return { values, badLines };
}

/** The values of the downward-API file at `path` (none when it is absent); lines left out are logged once. */
export function readDownwardApiFile(path: string, log: Logger): Readonly<Record<string, string>> {
  const { values, badLines } = parseDownwardApi(readIfExists(path) ?? "");
  if (badLines.length > 0) {
    log.warn('downward-API file lines that are not key="value" were left out', {
      file: path,
      lines: badLines.slice(0, 10).join(","),
    });
  }
  return values;
}

/** The value of a Go double-quoted string literal, or undefined when `quoted` is not one. */
function unquoteGo(quoted: string): string | undefined {
  if (quoted.length < 2 || quoted[0] !== '"' || quoted.at(-1) !== '"') return undefined;
  const body = quoted.slice(1, -1);
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let at = 0; at < body.length;) {
    const c = body[at];
    if (c === '"' || c === "\n") return undefined;
    if (c !== "\\") {
      const point = body.codePointAt(at)!;
      const char = String.fromCodePoint(point);
      bytes.push(...encoder.encode(char));
      at += char.length;
      continue;
    }
    const kind = body[at + 1];
    if (kind === undefined) return undefined;
    if (kind in SIMPLE_ESCAPES) {
      bytes.push(...encoder.encode(SIMPLE_ESCAPES[kind]));
      at += 2;
    } else if (kind in HEX_DIGITS) {
      const digits = body.slice(at + 2, at + 2 + HEX_DIGITS[kind]);
      if (!new RegExp(`^[0-9a-fA-F]{${HEX_DIGITS[kind]}}$`).test(digits)) return undefined;
      const value = parseInt(digits, 16);
      if (kind === "x") bytes.push(value);
      else if (value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return undefined;
      else bytes.push(...encoder.encode(String.fromCodePoint(value)));
      at += 2 + HEX_DIGITS[kind];
    } else if (kind >= "0" && kind <= "7") {
      const digits = body.slice(at + 1, at + 4);
      if (!/^[0-7]{3}$/.test(digits) || parseInt(digits, 8) > 0xff) return undefined;
      bytes.push(parseInt(digits, 8));
      at += 4;
    } else {
      return undefined;
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}
