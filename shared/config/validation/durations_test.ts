import assert from "node:assert/strict";
import { ValidationReport } from "./report.ts";
import { durationAt, formatDuration, MILLISECOND, MS_DURATION, parseDuration, SECOND } from "./durations.ts";

Deno.test("parseDuration reads Go duration strings as nanoseconds", async (t) => {
  await t.step("single units and fractions", () => {
    assert.equal(parseDuration("1.5s"), 1_500_000_000n);
    assert.equal(parseDuration("100ms"), 100n * MILLISECOND);
    assert.equal(parseDuration("250us"), 250_000n);
    assert.equal(parseDuration("250µs"), 250_000n);
    assert.equal(parseDuration("7ns"), 7n);
    assert.equal(parseDuration(".5h"), 1800n * SECOND);
  });

  await t.step("sequences, signs and zero", () => {
    assert.equal(parseDuration("1h30m"), 5400n * SECOND);
    assert.equal(parseDuration("-2s"), -2n * SECOND);
    assert.equal(parseDuration("+2s"), 2n * SECOND);
    assert.equal(parseDuration("0"), 0n);
  });

  await t.step("rejects what Go rejects", () => {
    for (const text of ["", "1", "s", "1d", "1.s.", "1 s", "-", "1s2", "99999999999999999999h"]) {
      assert.equal(parseDuration(text), undefined, text);
    }
  });
});

Deno.test("formatDuration prints the largest unit that fits", () => {
  assert.equal(formatDuration(MILLISECOND), "1ms");
  assert.equal(formatDuration(1_500_000_000n), "1.5s");
  assert.equal(formatDuration(0n), "0s");
  assert.equal(formatDuration(-1500n), "-1.5us");
});

Deno.test("durationAt applies minimum and precision rules", async (t) => {
  const errors = (value: unknown, rules = MS_DURATION) => {
    const report = new ValidationReport();
    durationAt(report, "spec.timeout", value, rules);
    return report.errors.map((e) => e.message);
  };
  await t.step("valid durations pass", () => {
    assert.deepEqual(errors("1ms"), []);
    assert.deepEqual(errors("2.5s"), []);
    assert.deepEqual(errors(undefined), []);
  });
  await t.step("too small, too precise, not a duration", () => {
    assert.deepEqual(errors("0s"), ['duration must be at least 1ms, got "0s"']);
    assert.deepEqual(errors("1500us"), ['only durations to ms precision are supported, got "1500us"']);
    assert.match(errors("soon")[0], /invalid duration "soon"/);
    assert.match(errors(5)[0], /must be a duration string/);
  });
  await t.step("a maximum", () => {
    assert.deepEqual(errors("31s", { max: 30n * SECOND }), ['duration must be at most 30s, got "31s"']);
  });
});
