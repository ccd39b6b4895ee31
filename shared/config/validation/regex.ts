import re2Module from "re2-wasm/build/wasm/re2.js";

/** A compiled pattern in RE2's WebAssembly heap; embind objects live until `delete()`, never collected. */
interface CompiledRe2 {
  ok(): boolean;
  error(): string;
  /** The first match at or after `start`; `index` is -1 when there is none. */
  match(input: string, start: number, captures: boolean): { readonly index: number };
  delete(): void;
}

/**
 * RE2 itself, below `re2-wasm`'s `RE2` class. That class never frees what it compiles, and a pattern it
 * rejects cannot be freed at all (the constructor throws with the compiled object unreachable), while the
 * module's heap is a fixed 16 MiB: about 7,000 checks in a process's life filled it, and from then on every
 * pattern, valid or not, came back as an out-of-memory "invalid regex". The class also rewrites JavaScript
 * syntax (`\u0041`, `(?<name>`) into RE2's, which Envoy's RE2 does not do; the pattern is checked as written.
 */
const WrappedRe2 = (re2Module as unknown as {
  WrappedRE2: new (pattern: string, ignoreCase: boolean, multiline: boolean, dotAll: boolean) => CompiledRe2;
}).WrappedRE2;

/**
 * The longest pattern checked, in UTF-16 code units. Envoy refuses a regex whose compiled program is larger
 * than 100 instructions unless its runtime raises `re2.max_program_size.error_level`, which a pattern of a few
 * hundred characters already reaches; a 64 KiB pattern fills RE2's heap while it compiles, and 4 KiB compiles
 * within about 25 ms whatever it is made of.
 */
export const MAX_RE2_PATTERN_LENGTH = 4096;

/**
 * Checks that `pattern` is valid RE2 syntax (what Envoy's safe regex engine accepts); look-arounds,
 * backreferences and possessive quantifiers are rejected, and so is a pattern longer than
 * {@link MAX_RE2_PATTERN_LENGTH}. Returns a message when invalid.
 */
export function checkRe2(pattern: string): string | undefined {
  if (pattern.length > MAX_RE2_PATTERN_LENGTH) {
    return `regex of ${pattern.length} characters is longer than the ${MAX_RE2_PATTERN_LENGTH} accepted ` +
      `(Envoy refuses programs past 100 RE2 instructions by default): "${pattern.slice(0, 40)}…"`;
  }
  const known = verdicts.get(pattern);
  if (known !== undefined) {
    // Most recently used last: the memo drops the patterns no resource has carried for longest.
    verdicts.delete(pattern);
    verdicts.set(pattern, known);
    return known === VALID ? undefined : known;
  }
  const compiled = compile(pattern);
  let verdict: string = VALID;
  if ("error" in compiled) {
    verdict =
      `invalid RE2 regex "${pattern}": ${compiled.error}; see https://github.com/google/re2/wiki/Syntax`;
  } else {
    compiled.re2.delete();
  }
  remember(pattern, verdict);
  return verdict === VALID ? undefined : verdict;
}

/**
 * Characters of the patterns whose verdicts {@link checkRe2} keeps. A compile costs 50–100 µs in RE2's
 * WebAssembly, and the same patterns are checked again and again: by each source when a resource changes, by
 * the webhook, and by the analyzers on every run (a VirtualService of 6,000 regex routes took a second each
 * time). 1 Mi characters holds the regexes of such a mesh many times over, in a few MiB.
 */
const VERDICT_MEMO_CHARS = 1024 * 1024;
/** A valid pattern's verdict in the memo; any other verdict is the message of why it is invalid. */
const VALID = "";
/** Pattern → verdict, least recently used first. Per process: verdicts are a pure function of the pattern. */
const verdicts = new Map<string, string>();
let verdictChars = 0;

function remember(pattern: string, verdict: string): void {
  for (const [old, oldVerdict] of verdicts) {
    if (verdictChars + pattern.length + verdict.length <= VERDICT_MEMO_CHARS) break;
    verdicts.delete(old);
    verdictChars -= old.length + oldVerdict.length;
  }
  verdicts.set(pattern, verdict);
  verdictChars += pattern.length + verdict.length;
}

/** `pattern` compiled, which the caller must `delete()`, or why RE2 refused it (nothing is left to free then). */
function compile(pattern: string): { readonly re2: CompiledRe2 } | { readonly error: string } {
  let re2: CompiledRe2;
  try {
    re2 = new WrappedRe2(pattern, false, false, false);
  } catch (e) {
    // Only an exhausted heap aborts a compile; the pattern is refused, not the process.
    return { error: e instanceof Error ? e.message.split("\n")[0] : String(e) };
  }
  if (re2.ok()) return { re2 };
  const error = re2.error();
  re2.delete();
  return { error };
}

/**
 * Characters of the patterns {@link re2Matches} keeps compiled. RE2's heap is 16 MiB and a compiled pattern
 * takes a few KiB, a 4 KiB pattern a few hundred; 16 Ki characters of patterns keep that well inside it.
 */
const MATCHER_MEMO_CHARS = 16 * 1024;
/** Inputs longer than this never match: what is matched (a proxy's version) is short, and copied into RE2's heap. */
export const MAX_RE2_INPUT_LENGTH = 1024;

/** Compiled patterns by source, oldest first; invalid ones as `null`. Per process, as RE2's heap is. */
const compiled = new Map<string, CompiledRe2 | null>();
let compiledChars = 0;

function compiledPattern(pattern: string): CompiledRe2 | null {
  const known = compiled.get(pattern);
  if (known !== undefined) return known;
  const result = pattern.length > MAX_RE2_PATTERN_LENGTH ? undefined : compile(pattern);
  const re2 = result !== undefined && "re2" in result ? result.re2 : null;
  for (const [old, oldRe2] of compiled) {
    if (compiledChars + pattern.length <= MATCHER_MEMO_CHARS) break;
    oldRe2?.delete();
    compiled.delete(old);
    compiledChars -= old.length;
  }
  compiled.set(pattern, re2);
  compiledChars += pattern.length;
  return re2;
}

/**
 * Whether RE2 finds `pattern` anywhere in `input`, as Go's `MatchString` does: in time linear in the input,
 * whatever the pattern, unlike a JavaScript `RegExp`, and with RE2's syntax (`(?i)`, `\pN`). An invalid
 * pattern, or an input longer than {@link MAX_RE2_INPUT_LENGTH}, matches nothing.
 */
export function re2Matches(pattern: string, input: string): boolean {
  if (input.length > MAX_RE2_INPUT_LENGTH) return false;
  const re2 = compiledPattern(pattern);
  if (re2 === null) return false;
  try {
    return re2.match(input, 0, false).index >= 0;
  } catch {
    return false;
  }
}
