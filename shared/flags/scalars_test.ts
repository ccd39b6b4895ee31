import assert from "node:assert/strict";
import { parseFloat32, parseGoBool, parseGoInt, parseUint16 } from "./scalars.ts";

Deno.test("parseGoBool accepts exactly Go's ParseBool words", () => {
  for (const t of ["1", "t", "T", "TRUE", "true", "True"]) assert.equal(parseGoBool(t), true);
  for (const f of ["0", "f", "F", "FALSE", "false", "False"]) assert.equal(parseGoBool(f), false);
  for (const bad of ["yes", "on", "tRuE", ""]) assert.throws(() => parseGoBool(bad), TypeError);
});

Deno.test("parseUint16 rejects values outside 0..65535", () => {
  assert.equal(parseUint16("9876"), 9876);
  assert.equal(parseUint16("0"), 0);
  assert.throws(() => parseUint16("70000"), /"70000".*0 to 65535/);
  assert.throws(() => parseUint16("-1"), RangeError);
  assert.throws(() => parseUint16("12a"), /whole number/);
});

Deno.test("parseGoInt and parseFloat32 read numbers and reject words", () => {
  assert.equal(parseGoInt("-40"), -40);
  assert.equal(parseFloat32("20"), 20);
  assert.equal(parseFloat32("0.5"), 0.5);
  assert.throws(() => parseFloat32("fast"), /"fast"/);
  assert.throws(() => parseFloat32("1e39"), /float32/);
});
