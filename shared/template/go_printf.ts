/**
 * Go's `fmt.Sprintf` for bootstrap templates' `printf`: the verbs `%v %s %q %d %t %f %e %g %x %X %o %b %c %%`
 * with the flags `-`, `+`, ` `, `0`, a width and a precision. Where Go would write a `%!verb(…)` marker into
 * the output (a value of the wrong kind, a missing or an extra argument), this throws instead, so a mistake
 * cannot reach the proxy's configuration. `%v` prints as a template action does (lists and maps as JSON).
 *
 * @module
 */

const SPEC = /%([-+# 0]*)(\d+)?(?:\.(\d*))?([a-zA-Z%])?/y;

interface Spec {
  readonly verb: string;
  readonly flags: string;
  readonly width?: number;
  readonly precision?: number;
}

/** A value as a template action prints it: strings as they are, lists and maps as JSON. */
export function formatValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null) {
    // Go's fmt.Stringer: a value with a String method prints as what it returns.
    const stringer = (value as { String?: unknown }).String;
    return typeof stringer === "function" ? String(stringer.call(value)) : JSON.stringify(value);
  }
  return String(value);
}

/**
 * Formats `args` by `format` as Go's `fmt.Sprintf` does.
 *
 * @throws {TypeError} naming the verb and the value when they do not fit, or when arguments are missing or
 *   left over
 */
export function sprintf(format: string, args: readonly unknown[]): string {
  let out = "";
  let used = 0;
  let at = 0;
  while (at < format.length) {
    const percent = format.indexOf("%", at);
    if (percent < 0) {
      out += format.slice(at);
      break;
    }
    out += format.slice(at, percent);
    SPEC.lastIndex = percent;
    const [whole, flags, width, precision, verb] = SPEC.exec(format)!;
    at = SPEC.lastIndex;
    if (verb === undefined) throw new TypeError(`format "${format}" ends inside "${whole}": expected a verb`);
    if (verb === "%") {
      out += "%";
      continue;
    }
    if (used >= args.length) {
      throw new TypeError(`"${whole}" has no argument: format "${format}" has ${args.length}`);
    }
    const spec: Spec = {
      verb,
      flags,
      ...(width !== undefined ? { width: Number(width) } : {}),
      ...(precision !== undefined ? { precision: Number(precision || "0") } : {}),
    };
    out += pad(formatOne(spec, args[used++], whole), spec);
  }
  if (used < args.length) {
    throw new TypeError(`${args.length - used} argument(s) left over: format "${format}" uses ${used}`);
  }
  return out;
}

function describe(value: unknown): string {
  const kind = value === undefined || value === null ? "nil" : Array.isArray(value) ? "list" : typeof value;
  return `${kind} ${JSON.stringify(value) ?? String(value)}`;
}

function formatOne(spec: Spec, value: unknown, whole: string): string {
  const wrong = (wanted: string): never => {
    throw new TypeError(`"${whole}" wants ${wanted}, got ${describe(value)}`);
  };
  const integer = () => typeof value === "number" && Number.isInteger(value) ? value : wrong("an integer");
  const signed = (digits: string, negative: boolean) =>
    (negative ? "-" : spec.flags.includes("+") ? "+" : spec.flags.includes(" ") ? " " : "") + digits;
  switch (spec.verb) {
    case "v":
      return typeof value === "number" ? signed(String(Math.abs(value)), value < 0) : formatValue(value);
    case "s":
      return typeof value === "string" ? truncate(value, spec.precision) : wrong("a string");
    case "q":
      return typeof value === "string" ? quote(truncate(value, spec.precision)) : wrong("a string");
    case "t":
      return typeof value === "boolean" ? String(value) : wrong("a bool");
    case "d": {
      const n = integer();
      return signed(String(Math.abs(n)), n < 0);
    }
    case "x":
    case "X": {
      const hex = typeof value === "string"
        ? [...new TextEncoder().encode(value)].map((b) => b.toString(16).padStart(2, "0")).join("")
        : signed(Math.abs(integer()).toString(16), (value as number) < 0);
      return spec.verb === "X" ? hex.toUpperCase() : hex;
    }
    case "o":
    case "b": {
      const n = integer();
      return signed(Math.abs(n).toString(spec.verb === "o" ? 8 : 2), n < 0);
    }
    case "c":
      return String.fromCodePoint(integer());
    case "f":
    case "F":
    case "e":
    case "E":
    case "g":
    case "G":
      return typeof value === "number"
        ? signed(floatDigits(Math.abs(value), spec), value < 0)
        : wrong("a number");
    default:
      throw new TypeError(
        `"${whole}": %${spec.verb} is not supported; use %v %s %q %d %t %f %e %g %x %o %b %c`,
      );
  }
}

/** `%f`, `%e` and `%g` of a non-negative number, with Go's two-digit exponents. */
function floatDigits(value: number, spec: Spec): string {
  const lower = spec.verb.toLowerCase();
  const goExponent = (text: string) =>
    text.replace(/e([+-])(\d+)$/, (_, sign: string, digits: string) => `e${sign}${digits.padStart(2, "0")}`);
  let text: string;
  if (lower === "f") text = value.toFixed(spec.precision ?? 6);
  else if (lower === "e") text = goExponent(value.toExponential(spec.precision ?? 6));
  else {
    // %g: the shortest digits, or `precision` significant ones; exponent form when the exponent is below -4 or
    // at least the precision (6 for the shortest), as Go's strconv decides.
    const digits = spec.precision === undefined ? undefined : Math.max(spec.precision, 1);
    const exponent = value === 0 ? 0 : Math.floor(Math.log10(value));
    text = exponent < -4 || exponent >= (digits ?? 6)
      ? goExponent(
        (digits === undefined ? value.toExponential() : value.toExponential(digits - 1)).replace(
          /\.?0+e/,
          "e",
        ),
      )
      : String(digits === undefined ? value : Number(value.toPrecision(digits)));
  }
  return spec.verb === lower ? text : text.toUpperCase();
}

/** A string quoted as Go's `%q` (`strconv.Quote`) does. */
function quote(text: string): string {
  const named: Record<string, string> = {
    "\x07": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
  };
  let out = "";
  for (const c of text) {
    const code = c.codePointAt(0)!;
    if (Object.hasOwn(named, c)) out += named[c];
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += c;
  }
  return `"${out}"`;
}

function truncate(text: string, precision: number | undefined): string {
  return precision === undefined ? text : [...text].slice(0, precision).join("");
}

function pad(text: string, spec: Spec): string {
  const missing = (spec.width ?? 0) - [...text].length;
  if (missing <= 0) return text;
  if (spec.flags.includes("-")) return text + " ".repeat(missing);
  if (spec.flags.includes("0") && "dxXobfFeEgG".includes(spec.verb)) {
    const sign = /^[-+ ]/.test(text) ? text[0] : "";
    return sign + "0".repeat(missing) + text.slice(sign.length);
  }
  return " ".repeat(missing) + text;
}
