import assert from "node:assert/strict";
import { CHROMIUM, needs } from "../shared/testing/system_tools.ts";

const BROWSER_TESTS = new URL("./helpers/operator_pages_browser.ts", import.meta.url).pathname;

Deno.test({
  name: "ControlZ and the debug overview work in a real browser against the real server",
  ...needs(CHROMIUM),
  async fn() {
    // A `deno test` of its own with every permission: playwright-core reads /proc/sys when it loads, which Deno
    // allows only then; this file keeps the test task's narrow permissions.
    const { code, stdout, stderr } = await new Deno.Command("deno", {
      args: ["test", "--allow-all", BROWSER_TESTS],
      env: { TMPDIR: "/tmp", NO_COLOR: "1" },
      stdin: "null",
    }).output();
    const output = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
    assert.equal(code, 0, `The browser tests failed:\n${output}`);
    assert.match(output, /ok \| 1 passed \(6 steps\)/, output);
  },
});
