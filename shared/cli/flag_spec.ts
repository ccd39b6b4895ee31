import { formatDuration, parseDuration } from "../flags/duration.ts";
import { parseFloat32, parseGoBool, parseGoInt, parseUint16 } from "../flags/scalars.ts";

/** The flag types of the references (pflag's names). */
export type FlagType =
  | "string"
  | "int"
  | "uint16"
  | "float32"
  | "bool"
  | "duration"
  | "stringSlice"
  | "stringArray";

/** A parsed flag value: durations are nanoseconds, slices and arrays are string lists. */
export type FlagValue = string | number | boolean | bigint | readonly string[];

/** One command-line flag: long name (no dashes), optional one-letter short name, type, default and help. */
export interface FlagSpec {
  /** Long name, without dashes, as in `--name`. */
  readonly name: string;
  /** One-letter short name, without the dash. */
  readonly short?: string;
  /** How the flag's text is parsed. */
  readonly type: FlagType;
  /** Value when the flag is not given; of the type's value kind. */
  readonly default: FlagValue;
  /** One-line description shown in help. */
  readonly help: string;
}

/** Parses one occurrence of a flag's value; throws RangeError/TypeError explaining what is expected. */
export function parseFlagValue(spec: FlagSpec, text: string): FlagValue {
  switch (spec.type) {
    case "string":
      return text;
    case "int":
      return parseGoInt(text, -(2 ** 53) + 1, 2 ** 53 - 1);
    case "uint16":
      return parseUint16(text);
    case "float32":
      return parseFloat32(text);
    case "bool":
      return parseGoBool(text);
    case "duration":
      return parseDuration(text);
    case "stringSlice":
      return text === "" ? [] : text.split(",");
    case "stringArray":
      return [text];
  }
}

/** Formats a default the way pflag's help does: `"text"`, `1m0s`, `[a,b]`; undefined when pflag shows none. */
export function formatFlagDefault(spec: FlagSpec): string | undefined {
  const value = spec.default;
  switch (spec.type) {
    case "string":
      return value === "" ? undefined : JSON.stringify(value);
    case "bool":
      return value === true ? "true" : undefined;
    case "duration":
      return formatDuration(value as bigint);
    case "stringSlice":
    case "stringArray": {
      const list = value as readonly string[];
      return list.length === 0 ? undefined : `[${list.join(",")}]`;
    }
    default:
      return String(value);
  }
}

/** The placeholder shown after a flag in help (`duration`, `strings`, `uint16`). */
export function flagPlaceholder(type: FlagType): string {
  switch (type) {
    case "stringSlice":
      return "strings";
    case "stringArray":
      return "stringArray";
    case "float32":
      return "float32";
    default:
      return type;
  }
}
