import assert from "node:assert/strict";
import { invalidSetting, onlySettingFields, parseJsonSetting, settingObject } from "./json_setting.ts";

Deno.test("JSON setting checks name where the problem is, what is expected and what was found", async (t) => {
  await t.step("text that is not JSON names the variable and what it should hold", () => {
    assert.throws(() => parseJsonSetting("SOME_VAR", "{", "an object"), {
      message: /^SOME_VAR is not valid JSON \(.+\): expected an object$/,
    });
  });

  await t.step("a value of the wrong shape is quoted, shortened when long", () => {
    assert.equal(
      invalidSetting('SOME_VAR["a"].port', "a port", "http").message,
      'SOME_VAR["a"].port is invalid: expected a port, got "http"',
    );
    assert.match(invalidSetting("SOME_VAR", "a port", "x".repeat(500)).message, /got "x{56}\.\.\.$/);
  });

  await t.step("only a JSON object is an object", () => {
    assert.deepEqual(settingObject({ a: 1 }, "SOME_VAR", "an object"), { a: 1 });
    for (const value of [null, [], "a", 1]) {
      assert.throws(
        () => settingObject(value, "SOME_VAR", "an object"),
        /SOME_VAR is invalid: expected an object/,
      );
    }
  });

  await t.step("a field outside the allowed ones is refused by name", () => {
    onlySettingFields({ port: 1 }, ["port", "host"], "SOME_VAR");
    assert.throws(() => onlySettingFields({ prot: 1 }, ["port", "host"], "SOME_VAR"), {
      message: 'SOME_VAR has an unknown field "prot": expected only port, host',
    });
  });
});
