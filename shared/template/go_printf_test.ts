import assert from "node:assert/strict";
import { sprintf } from "./go_printf.ts";

Deno.test("printf formats as Go's fmt.Sprintf does", async (t) => {
  await t.step("strings, quoting, bools and values", () => {
    assert.equal(
      sprintf("%s|%q|%t|%v|%v|%%", ["a", 'q"\n', true, [1, "x"], 2]),
      `a|"q\\"\\n"|true|[1,"x"]|2|%`,
    );
    assert.equal(sprintf("%.2s|%5s|%-5s|", ["abc", "ab", "ab"]), "ab|   ab|ab   |");
  });
  await t.step("integers with signs, zero padding and bases", () => {
    assert.equal(sprintf("%d|%5d|%-5d|%05d|%+d|% d", [-7, 42, 42, -42, 3, 3]), "-7|   42|42   |-0042|+3| 3");
    assert.equal(sprintf("%x|%X|%o|%b|%c|%x", [255, 255, 8, 5, 65, "hi"]), "ff|FF|10|101|A|6869");
  });
  await t.step("floats with Go's two-digit exponents", () => {
    assert.equal(
      sprintf("%f|%.2f|%8.3f|%08.3f", [1.5, 3.14159, -3.14159, -3.14159]),
      "1.500000|3.14|  -3.142|-003.142",
    );
    assert.equal(
      sprintf("%e|%.2e|%g|%g|%.3g", [1234.5678, 0.000123, 1e6, 0.5, 1234.5678]),
      [
        "1.234568e+03",
        "1.23e-04",
        "1e+06",
        "0.5",
        "1.23e+03",
      ].join("|"),
    );
  });
});

Deno.test("printf refuses what Go would print a %!verb marker for", () => {
  assert.throws(() => sprintf("%d", ["a"]), /"%d" wants an integer, got string "a"/);
  assert.throws(() => sprintf("%s", [1]), /"%s" wants a string, got number 1/);
  assert.throws(() => sprintf("%d %d", [1]), /"%d" has no argument: format "%d %d" has 1/);
  assert.throws(() => sprintf("%d", [1, 2]), /1 argument\(s\) left over: format "%d" uses 1/);
  assert.throws(() => sprintf("%z", [1]), /%z is not supported/);
  assert.throws(() => sprintf("100%", []), /ends inside "%": expected a verb/);
});
