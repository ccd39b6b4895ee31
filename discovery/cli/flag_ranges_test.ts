import assert from "node:assert/strict";
import { checkFlagRanges } from "./flag_ranges.ts";

Deno.test("checkFlagRanges refuses numeric flags outside their range, naming flag, value and range", async (t) => {
  const cases: Array<[Record<string, number | bigint>, RegExp]> = [
    [
      { keepaliveTimeout: -5_000_000_000n },
      /Invalid --keepaliveTimeout "-5s": expected a value greater than 0s/,
    ],
    [{ keepaliveInterval: 0n }, /Invalid --keepaliveInterval "0s": expected a value greater than 0s/],
    [{ orchApiQPS: Number.NaN }, /Invalid --orchApiQPS "NaN"/],
    [{ orchApiBurst: 0 }, /Invalid --orchApiBurst "0": expected a value at least 1 and at most 1000000/],
    [{ mcpMaxMsgSize: -1 }, /Invalid --mcpMaxMsgSize "-1"/],
    [{ log_rotate_max_size: -1 }, /Invalid --log_rotate_max_size "-1": expected a value at least 0/],
  ]; // deno-fmt-ignore
  for (const [flags, message] of cases) {
    await t.step(Object.keys(flags)[0], () => assert.throws(() => checkFlagRanges(flags), { name: "RangeError", message }));
  }
  await t.step("values inside the ranges pass", () => {
    checkFlagRanges({ keepaliveTimeout: 1n, orchApiQPS: 20, orchApiBurst: 40, log_rotate_max_size: 0 });
  });
});
