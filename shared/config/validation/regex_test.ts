import assert from "node:assert/strict";
import { checkRe2 } from "./regex.ts";

Deno.test("checkRe2 accepts RE2 syntax and rejects what RE2 rejects", () => {
  for (const ok of ["^/api/v[0-9]+/.*$", "(?i)bearer .+", "\\d{3}", "[[:alpha:]]+", "\\p{Greek}"]) {
    assert.equal(checkRe2(ok), undefined, ok);
  }
  for (const bad of ["^(?!.secret).*", "(?<=a)b", "(a)\\1", "x*+", "a(b", "a{1001}"]) {
    assert.match(checkRe2(bad) ?? "", /invalid RE2 regex/, bad);
  }
});
