import assert from "node:assert/strict";
import { checkPortString, checkWildcard } from "./_match_values.ts";

Deno.test("checkWildcard allows * alone, as prefix or as suffix", async (t) => {
  await t.step("accepted", () => {
    for (const v of ["*", "*.example.com", "/api/*", "exact", "cluster.local/ns/default/sa/*"]) {
      assert.equal(checkWildcard(v), undefined, v);
    }
  });
  await t.step("rejected", () => {
    for (const v of ["a*b", "**", "*a*", "/a/*/b", "*/a*"]) assert.ok(checkWildcard(v), v);
  });
});

Deno.test("checkPortString takes decimal ports 0..65535", () => {
  for (const v of ["0", "80", "65535", "08080"]) assert.equal(checkPortString(v), undefined, v);
  for (const v of ["", "-1", "65536", "8080a", "1e3", " 80"]) assert.ok(checkPortString(v), v);
});
