import assert from "node:assert/strict";
import { cut, excerpt } from "./excerpt.ts";

Deno.test("excerpt escapes quotes and control characters and marks a cut", () => {
  assert.equal(excerpt('a "b"\nc'), 'a \\"b\\"\\nc');
  assert.equal(excerpt("x".repeat(10), 4), "xxxx…");
  assert.equal(excerpt("short", 5), "short");
});

Deno.test("cut shortens text without escaping it", () => {
  assert.equal(cut('a "b"', 10), 'a "b"');
  assert.equal(cut("x".repeat(10), 4), "xxxx…");
});
