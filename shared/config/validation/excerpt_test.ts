import assert from "node:assert/strict";
import { pathKey, quoteExcerpt } from "./excerpt.ts";

Deno.test("quoteExcerpt quotes a short text whole and escapes what is not printable ASCII", () => {
  assert.equal(quoteExcerpt("trafficPolicee"), '"trafficPolicee"');
  assert.equal(quoteExcerpt('a"b\\c\nd\u202e'), '"a\\"b\\\\c\\u{a}d\\u{202e}"');
});

Deno.test("quoteExcerpt cuts a long text after 32 characters", () => {
  const line = `root:$6$saltsalt$${"H".repeat(86)}:19000:0:99999:7:::`;
  assert.equal(quoteExcerpt(line), `"${line.slice(0, 32)}"…`);
});

Deno.test("pathKey prints a plain key whole and a long or odd one as an excerpt", () => {
  assert.equal(pathKey("app.kubernetes.io/name"), "app.kubernetes.io/name");
  assert.equal(pathKey("a b"), '"a b"');
  assert.equal(pathKey("x".repeat(65)), `"${"x".repeat(32)}"…`);
});
