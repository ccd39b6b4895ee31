import assert from "node:assert/strict";
import { checkRe2, MAX_RE2_INPUT_LENGTH, MAX_RE2_PATTERN_LENGTH, re2Matches } from "./regex.ts";

Deno.test("checkRe2 accepts RE2 syntax and rejects what RE2 rejects", () => {
  for (
    const ok of ["^/api/v[0-9]+/.*$", "(?i)bearer .+", "\\d{3}", "[[:alpha:]]+", "\\p{Greek}", "(?P<v>\\d+)"]
  ) {
    assert.equal(checkRe2(ok), undefined, ok);
  }
  for (const bad of ["^(?!.secret).*", "(?<=a)b", "(a)\\1", "x*+", "a(b", "a{1001}"]) {
    assert.match(checkRe2(bad) ?? "", /invalid RE2 regex/, bad);
  }
});

Deno.test("checkRe2 checks a pattern as RE2 reads it, not as JavaScript would", () => {
  // JavaScript-only syntax that re2-wasm's RE2 class rewrote into RE2's before compiling.
  assert.equal(
    checkRe2("\\u0041"),
    'invalid RE2 regex "\\u0041": invalid escape sequence: \\u; see https://github.com/google/re2/wiki/Syntax',
  );
  assert.match(checkRe2("(?<v>\\d+)") ?? "", /invalid perl operator: \(\?</);
});

Deno.test("checkRe2 keeps checking after tens of thousands of patterns, valid and invalid", () => {
  // RE2's heap is a fixed 16 MiB: a check that kept its compiled pattern failed every check after about 7,000.
  for (let i = 0; i < 12_000; i++) {
    assert.equal(checkRe2(`^/tenant-${i}/(a|b)+[0-9]{2,4}$`), undefined, `valid pattern ${i}`);
    assert.match(checkRe2(`(unclosed-${i}`) ?? "", /missing \)/, `invalid pattern ${i}`);
  }
  assert.equal(checkRe2("^/api/.*$"), undefined);
});

Deno.test("checkRe2 gives a pattern the same verdict again, from its memo and after the memo dropped it", () => {
  const valid = "^/memo/(a|b)+$";
  const invalid = "^/memo/(unclosed";
  const first = [checkRe2(valid), checkRe2(invalid)];
  assert.deepEqual(first, [
    undefined,
    'invalid RE2 regex "^/memo/(unclosed": missing ): ^/memo/(unclosed; see ' +
    "https://github.com/google/re2/wiki/Syntax",
  ]);
  assert.deepEqual([checkRe2(valid), checkRe2(invalid)], first);
  // Other patterns and verdicts of 2 Mi characters, twice what the memo keeps: both verdicts are dropped and
  // found again. RE2 refuses these at their first character, so they cost the test little.
  for (let i = 0; i < 256; i++) {
    assert.match(checkRe2(`*${i}-${"x".repeat(4000)}`) ?? "", /no argument for repetition operator: \*; see/);
  }
  assert.deepEqual([checkRe2(valid), checkRe2(invalid)], first);
});

Deno.test("checkRe2 refuses a pattern longer than its limit before compiling it", () => {
  const longest = "(a{2,9}b?)".repeat(MAX_RE2_PATTERN_LENGTH / 10) + "x".repeat(MAX_RE2_PATTERN_LENGTH % 10);
  assert.equal(longest.length, MAX_RE2_PATTERN_LENGTH);
  assert.equal(checkRe2(longest), undefined);
  const tooLong = "a".repeat(64 * 1024);
  assert.equal(
    checkRe2(tooLong),
    `regex of 65536 characters is longer than the 4096 accepted (Envoy refuses programs past 100 RE2 ` +
      `instructions by default): "${"a".repeat(40)}…"`,
  );
  assert.equal(checkRe2("^ok$"), undefined, "a refused long pattern leaves RE2 usable");
});

Deno.test("re2Matches finds an RE2 pattern anywhere in its input, in RE2's syntax", () => {
  assert.equal(re2Matches("^1\\.9", "1.9.9"), true);
  assert.equal(re2Matches("9$", "1.9"), true);
  assert.equal(re2Matches("^1\\.9", "1.8.0"), false);
  assert.equal(re2Matches("(?i)^v1", "V1.2"), true, "a flag group, which JavaScript refuses");
  assert.equal(re2Matches("(?<=a)b", "ab"), false, "an invalid pattern matches nothing");
  assert.equal(re2Matches("^1", "1" + "x".repeat(MAX_RE2_INPUT_LENGTH)), false, "nor does a too long input");
  assert.equal(re2Matches("^1", "1" + "x".repeat(MAX_RE2_INPUT_LENGTH - 1)), true);
});

Deno.test("re2Matches keeps matching past its memo of compiled patterns, which frees what it drops", () => {
  for (let i = 0; i < 10_000; i++) {
    assert.equal(re2Matches(`^${i}\\.(a|b)+$`, `${i}.abab`), true, `pattern ${i}`);
  }
  const long = "(x|y)".repeat(800);
  for (let i = 0; i < 40; i++) {
    assert.equal(
      re2Matches(`${i}${long}`, `${i}${"x".repeat(800)}`),
      true,
      `long pattern ${i}`,
    );
  }
  assert.equal(checkRe2("^ok$"), undefined, "checks still compile beside the memo");
});
