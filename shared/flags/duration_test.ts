import assert from "node:assert/strict";
import { durationToMs, formatDuration, MAX_DURATION_NS, parseDuration } from "./duration.ts";

Deno.test("parseDuration reads Go duration strings", async (t) => {
  const cases: Array<[string, bigint]> = [
    ["0", 0n],
    ["0s", 0n],
    ["5s", 5_000_000_000n],
    ["1m0s", 60_000_000_000n],
    ["1.5h", 5_400_000_000_000n],
    ["100ms", 100_000_000n],
    ["2h45m", 9_900_000_000_000n],
    ["-1.5s", -1_500_000_000n],
    ["1us", 1_000n],
    ["1µs", 1_000n],
    [".5s", 500_000_000n],
    ["1.000000001s", 1_000_000_001n],
    ["2562047h47m16.854775807s", MAX_DURATION_NS],
  ];
  for (const [text, ns] of cases) {
    await t.step(`"${text}" is ${ns}ns`, () => assert.equal(parseDuration(text), ns));
  }
});

Deno.test("parseDuration rejects malformed input with the value and what is expected", async (t) => {
  for (const bad of ["", "5", "s", "1x", "abc", "1.s5", "2562047h47m16.854775808s", "--1s"]) {
    await t.step(`"${bad}" is rejected`, () => {
      assert.throws(
        () => parseDuration(bad),
        (e: unknown) => e instanceof RangeError && e.message.includes(`"${bad}"`),
      );
    });
  }
});

Deno.test("formatDuration prints like Go's Duration.String", async (t) => {
  const cases: Array<[bigint, string]> = [
    [0n, "0s"],
    [1n, "1ns"],
    [1_500n, "1.5µs"],
    [100_000_000n, "100ms"],
    [1_000_000_000n, "1s"],
    [60_000_000_000n, "1m0s"],
    [3_600_000_000_000n, "1h0m0s"],
    [87_600n * 3_600_000_000_000n, "87600h0m0s"],
    [-1_500_000_000n, "-1.5s"],
    [MAX_DURATION_NS, "2562047h47m16.854775807s"],
  ];
  for (const [ns, text] of cases) {
    await t.step(`${ns}ns prints "${text}"`, () => assert.equal(formatDuration(ns), text));
  }
});

Deno.test("formatDuration and parseDuration round-trip", () => {
  for (const text of ["1m0s", "10s", "1h0m0s", "2160h0m0s", "1.5µs", "5m0s"]) {
    assert.equal(formatDuration(parseDuration(text)), text);
  }
});

Deno.test("durationToMs converts nanoseconds to milliseconds", () => {
  assert.equal(durationToMs(1_500_000n), 1.5);
  assert.equal(durationToMs(10_000_000_000n), 10_000);
});
