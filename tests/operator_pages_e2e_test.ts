import assert from "node:assert/strict";
import { CHROMIUM, needs } from "../shared/testing/system_tools.ts";

const BROWSER_TESTS = new URL("./helpers/operator_pages_browser.ts", import.meta.url).pathname;

Deno.test({
  name: "ControlZ and the debug overview work in a real browser against the real server",
  ...needs(CHROMIUM),
  async fn() {
    // A `deno test` of its own: playwright-core's bundled is-wsl probes /proc/sys/fs/binfmt_misc when it loads,
    // a path Deno lets only --allow-all read. `__IS_WSL_TEST__` is is-wsl's own switch that defers the probe
    // (never run on Linux by what the tests call), so the child keeps narrow permissions of its own.
    const { code, stdout, stderr } = await new Deno.Command("deno", {
      args: [
        "test",
        "--allow-net=127.0.0.1,localhost",
        "--allow-read=.,/tmp,/usr/bin/chromium",
        "--allow-write=/tmp",
        "--allow-env",
        "--allow-sys",
        "--allow-run=deno,/usr/bin/chromium",
        BROWSER_TESTS,
      ],
      env: { TMPDIR: "/tmp", NO_COLOR: "1", __IS_WSL_TEST__: "1" },
      stdin: "null",
    }).output();
    const output = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
    assert.equal(code, 0, `The browser tests failed:\n${output}`);
    assert.match(output, /ok \| 1 passed \(6 steps\)/, output);
  },
});
