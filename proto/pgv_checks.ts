/**
 * Checks one value against one kind of protoc-gen-validate rule (`StringRules`, `UInt32Rules`, ...), returning
 * what is wrong in words, e.g. `must be <= 65535 (got 70000)`.
 *
 * @module
 */
import {
  isEmail,
  isHostname,
  isHttpHeaderName,
  isHttpHeaderValue,
  isIpv4Address,
  isIpv6Address,
  isUri,
  isUriRef,
  isUuid,
} from "./pgv_well_known.ts";

type Loose = Record<string, unknown>;

/** A value whose order is what rules compare: a number, or a bigint for 64-bit integers and durations. */
type Ordered = number | bigint;

const LONG_KINDS = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);

function list(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/** "1 character", "2 characters". */
function count(n: unknown, noun: string): string {
  return `${n} ${noun}${Number(n) === 1 ? "" : "s"}`;
}

/** Quoted rendering for messages. */
function q(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/**
 * Range rules shared by numbers, durations and timestamps. When the lower bound is above the upper bound the
 * range is reversed (the value must lie outside it), as PGV specifies.
 */
function checkRange(
  rules: Loose,
  value: Ordered,
  convert: (raw: unknown) => Ordered,
  show: (v: Ordered) => string,
): string | undefined {
  const got = ` (got ${show(value)})`;
  if (rules.const !== undefined && value !== convert(rules.const)) {
    return `must equal ${show(convert(rules.const))}${got}`;
  }
  const inList = list(rules.in).map(convert);
  if (inList.length > 0 && !inList.includes(value)) {
    return `must be one of [${inList.map(show).join(", ")}]${got}`;
  }
  const notIn = list(rules.not_in).map(convert);
  if (notIn.includes(value)) return `must not be one of [${notIn.map(show).join(", ")}]${got}`;

  const lt = rules.lt === undefined ? undefined : convert(rules.lt);
  const lte = rules.lte === undefined ? undefined : convert(rules.lte);
  const gt = rules.gt === undefined ? undefined : convert(rules.gt);
  const gte = rules.gte === undefined ? undefined : convert(rules.gte);
  const upper = lt ?? lte;
  const lower = gt ?? gte;
  const belowUpper = upper === undefined || (lt !== undefined ? value < lt : value <= lte!);
  const aboveLower = lower === undefined || (gt !== undefined ? value > gt : value >= gte!);
  const upperText = upper === undefined ? "" : `${lt !== undefined ? "<" : "<="} ${show(upper)}`;
  const lowerText = lower === undefined ? "" : `${gt !== undefined ? ">" : ">="} ${show(lower)}`;
  if (upper !== undefined && lower !== undefined) {
    if (lower < upper) {
      if (belowUpper && aboveLower) return undefined;
      const open = gt !== undefined ? "(" : "[";
      const close = lt !== undefined ? ")" : "]";
      return `must be in range ${open}${show(lower)}, ${show(upper)}${close}${got}`;
    }
    return belowUpper || aboveLower ? undefined : `must be ${upperText} or ${lowerText}${got}`;
  }
  if (!belowUpper) return `must be ${upperText}${got}`;
  if (!aboveLower) return `must be ${lowerText}${got}`;
  return undefined;
}

/** Checks a number against `FloatRules`, `Int32Rules`, `UInt64Rules`, ... (`kind` is the protobuf type). */
export function checkNumberRules(kind: string, rules: Loose, raw: unknown): string | undefined {
  if (LONG_KINDS.has(kind)) {
    const toBig = (v: unknown): bigint => BigInt(String(v));
    return checkRange(rules, toBig(raw), toBig, String);
  }
  return checkRange(rules, Number(raw), Number, String);
}

/** Checks an enum number against `EnumRules`; `defined` lists the enum's numbers. */
export function checkEnumRules(
  rules: Loose,
  value: number,
  defined: readonly number[],
  name: string,
): string | undefined {
  if (rules.defined_only === true && !defined.includes(value)) {
    return `must be a defined value of enum ${name} (got ${value})`;
  }
  return checkRange({ const: rules.const, in: rules.in, not_in: rules.not_in }, value, Number, String);
}

/** Checks a bool against `BoolRules`. */
export function checkBoolRules(rules: Loose, value: boolean): string | undefined {
  return rules.const !== undefined && value !== rules.const ? `must be ${rules.const}` : undefined;
}

const patternCache = new Map<string, RegExp | null>();

/** Compiles an RE2 pattern as a JavaScript RegExp; the patterns in Envoy's API mean the same in both. */
function compile(pattern: string): RegExp | null {
  let compiled = patternCache.get(pattern);
  if (compiled === undefined) {
    try {
      compiled = new RegExp(pattern, "u");
    } catch {
      try {
        compiled = new RegExp(pattern);
      } catch {
        compiled = null;
      }
    }
    patternCache.set(pattern, compiled);
  }
  return compiled;
}

function checkPattern(pattern: unknown, text: string): string | undefined {
  if (typeof pattern !== "string") return undefined;
  const re = compile(pattern);
  if (re === null) return `has a rule pattern ${q(pattern)} that cannot be compiled`;
  return re.test(text) ? undefined : `must match pattern ${q(pattern)} (got ${q(text)})`;
}

const utf8 = new TextEncoder();

/** The number of Unicode code points, which PGV's string lengths count. */
function runeCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

const WELL_KNOWN_STRING: readonly [string, (text: string) => boolean, string][] = [
  ["email", isEmail, "an e-mail address"],
  ["hostname", isHostname, "a hostname"],
  ["ip", (t) => isIpv4Address(t) || isIpv6Address(t), "an IP address"],
  ["ipv4", isIpv4Address, "an IPv4 address"],
  ["ipv6", isIpv6Address, "an IPv6 address"],
  ["uri", isUri, "an absolute URI"],
  ["uri_ref", isUriRef, "a URI reference"],
  ["address", (t) => isHostname(t) || isIpv4Address(t) || isIpv6Address(t), "a hostname or IP address"],
  ["uuid", isUuid, "a UUID"],
];

/** Checks a string against `StringRules`. */
export function checkStringRules(rules: Loose, text: string): string | undefined {
  if (rules.ignore_empty === true && text === "") return undefined;
  const got = ` (got ${q(text)})`;
  if (rules.const !== undefined && text !== rules.const) return `must equal ${q(rules.const)}${got}`;
  const runes = runeCount(text);
  const bytes = utf8.encode(text).length;
  if (rules.len !== undefined && runes !== Number(rules.len)) {
    return `must be exactly ${count(rules.len, "character")}${got}`;
  }
  if (rules.min_len !== undefined && runes < Number(rules.min_len)) {
    return `must be at least ${count(rules.min_len, "character")}${got}`;
  }
  if (rules.max_len !== undefined && runes > Number(rules.max_len)) {
    return `must be at most ${count(rules.max_len, "character")}${got}`;
  }
  if (rules.len_bytes !== undefined && bytes !== Number(rules.len_bytes)) {
    return `must be exactly ${count(rules.len_bytes, "byte")}${got}`;
  }
  if (rules.min_bytes !== undefined && bytes < Number(rules.min_bytes)) {
    return `must be at least ${count(rules.min_bytes, "byte")}${got}`;
  }
  if (rules.max_bytes !== undefined && bytes > Number(rules.max_bytes)) {
    return `must be at most ${count(rules.max_bytes, "byte")}${got}`;
  }
  const patternProblem = checkPattern(rules.pattern, text);
  if (patternProblem !== undefined) return patternProblem;
  if (typeof rules.prefix === "string" && !text.startsWith(rules.prefix)) {
    return `must start with ${q(rules.prefix)}${got}`;
  }
  if (typeof rules.suffix === "string" && !text.endsWith(rules.suffix)) {
    return `must end with ${q(rules.suffix)}${got}`;
  }
  if (typeof rules.contains === "string" && !text.includes(rules.contains)) {
    return `must contain ${q(rules.contains)}${got}`;
  }
  if (typeof rules.not_contains === "string" && text.includes(rules.not_contains)) {
    return `must not contain ${q(rules.not_contains)}${got}`;
  }
  const inList = list(rules.in).map(String);
  if (inList.length > 0 && !inList.includes(text)) {
    return `must be one of [${inList.map(q).join(", ")}]${got}`;
  }
  const notIn = list(rules.not_in).map(String);
  if (notIn.includes(text)) return `must not be one of [${notIn.map(q).join(", ")}]${got}`;
  for (const [key, test, what] of WELL_KNOWN_STRING) {
    if (rules[key] === true && !test(text)) return `must be ${what}${got}`;
  }
  const regex = rules.well_known_regex;
  // `strict` defaults to true in validate.proto.
  const strict = rules.strict !== false;
  if ((regex === "HTTP_HEADER_NAME" || regex === 1) && !isHttpHeaderName(text, strict)) {
    return `must be a valid HTTP header name${strict ? "" : " (no NUL, CR or LF)"}${got}`;
  }
  if ((regex === "HTTP_HEADER_VALUE" || regex === 2) && !isHttpHeaderValue(text, strict)) {
    return `must be a valid HTTP header value${strict ? "" : " (no NUL, CR or LF)"}${got}`;
  }
  return undefined;
}

/** Rule values for bytes come from the .proto text as strings. */
function ruleBytes(value: unknown): Uint8Array {
  return value instanceof Uint8Array ? value : utf8.encode(String(value));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function indexOfBytes(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** Checks bytes against `BytesRules`. */
export function checkBytesRules(rules: Loose, value: Uint8Array): string | undefined {
  const got = ` (got ${value.length} bytes)`;
  if (rules.ignore_empty === true && value.length === 0) return undefined;
  if (rules.const !== undefined && !sameBytes(value, ruleBytes(rules.const))) {
    return `must equal the given bytes${got}`;
  }
  if (rules.len !== undefined && value.length !== Number(rules.len)) {
    return `must be exactly ${count(rules.len, "byte")}${got}`;
  }
  if (rules.min_len !== undefined && value.length < Number(rules.min_len)) {
    return `must be at least ${count(rules.min_len, "byte")}${got}`;
  }
  if (rules.max_len !== undefined && value.length > Number(rules.max_len)) {
    return `must be at most ${count(rules.max_len, "byte")}${got}`;
  }
  if (rules.pattern !== undefined) {
    const patternProblem = checkPattern(rules.pattern, new TextDecoder("latin1").decode(value));
    if (patternProblem !== undefined) return patternProblem;
  }
  if (rules.prefix !== undefined) {
    const prefix = ruleBytes(rules.prefix);
    if (prefix.length > value.length || !sameBytes(value.subarray(0, prefix.length), prefix)) {
      return `must start with ${q(rules.prefix)}`;
    }
  }
  if (rules.suffix !== undefined) {
    const suffix = ruleBytes(rules.suffix);
    if (suffix.length > value.length || !sameBytes(value.subarray(value.length - suffix.length), suffix)) {
      return `must end with ${q(rules.suffix)}`;
    }
  }
  if (rules.contains !== undefined && indexOfBytes(value, ruleBytes(rules.contains)) < 0) {
    return `must contain ${q(rules.contains)}`;
  }
  const inList = list(rules.in).map(ruleBytes);
  if (inList.length > 0 && !inList.some((b) => sameBytes(b, value))) {
    return `must be one of the given byte strings`;
  }
  if (list(rules.not_in).map(ruleBytes).some((b) => sameBytes(b, value))) {
    return `must not be one of the given byte strings`;
  }
  if (rules.ip === true && value.length !== 4 && value.length !== 16) {
    return `must be an IP address in 4 or 16 bytes${got}`;
  }
  if (rules.ipv4 === true && value.length !== 4) return `must be an IPv4 address in 4 bytes${got}`;
  if (rules.ipv6 === true && value.length !== 16) return `must be an IPv6 address in 16 bytes${got}`;
  return undefined;
}

/** Nanoseconds of a decoded Duration/Timestamp or of a rule value such as `{}` or `{ seconds: 1 }`. */
export function toNanos(value: unknown): bigint {
  const v = (value ?? {}) as Loose;
  return BigInt(String(v.seconds ?? 0)) * 1_000_000_000n + BigInt(String(v.nanos ?? 0));
}

/** Renders nanoseconds as a protobuf JSON duration, e.g. `0.001s`. */
function showDuration(nanos: Ordered): string {
  const n = BigInt(nanos);
  const sign = n < 0n ? "-" : "";
  const abs = n < 0n ? -n : n;
  const whole = abs / 1_000_000_000n;
  const frac = (abs % 1_000_000_000n).toString().padStart(9, "0").replace(/0+$/, "");
  return `${sign}${whole}${frac === "" ? "" : `.${frac}`}s`;
}

/** Checks a set Duration against `DurationRules` (`required` is checked by the caller). */
export function checkDurationRules(rules: Loose, value: unknown): string | undefined {
  return checkRange(rules, toNanos(value), toNanos, showDuration);
}

/** Checks a set Timestamp against `TimestampRules` (`required` is checked by the caller). */
export function checkTimestampRules(rules: Loose, value: unknown, now: Date): string | undefined {
  const nanos = toNanos(value);
  const nowNanos = BigInt(now.getTime()) * 1_000_000n;
  const show = (n: Ordered) => new Date(Number(BigInt(n) / 1_000_000n)).toISOString();
  if (rules.lt_now === true && nanos >= nowNanos) return `must be before now (got ${show(nanos)})`;
  if (rules.gt_now === true && nanos <= nowNanos) return `must be after now (got ${show(nanos)})`;
  if (rules.within !== undefined) {
    const within = toNanos(rules.within);
    const distance = nanos > nowNanos ? nanos - nowNanos : nowNanos - nanos;
    if (distance > within) return `must be within ${showDuration(within)} of now (got ${show(nanos)})`;
  }
  return checkRange(rules, nanos, toNanos, show);
}

/** Checks an Any's type URL against `AnyRules` (`required` is checked by the caller). */
export function checkAnyRules(rules: Loose, typeUrl: string): string | undefined {
  const inList = list(rules.in).map(String);
  if (inList.length > 0 && !inList.includes(typeUrl)) {
    return `must have a type URL in [${inList.map(q).join(", ")}] (got ${q(typeUrl)})`;
  }
  if (list(rules.not_in).map(String).includes(typeUrl)) return `must not have type URL ${q(typeUrl)}`;
  return undefined;
}
