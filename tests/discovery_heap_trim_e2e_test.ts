import assert from "node:assert/strict";
import { join } from "node:path";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";

Deno.test({
  name:
    "mesh-discovery started by its task trims the native heap, and does not with DISCOVERY_NATIVE_HEAP_TRIM_INTERVAL=0s",
  ignore: Deno.build.os !== "linux",
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "heap_trim_e2e_" });
  try {
    await Deno.mkdir(join(dir, "config"));
    const start = (env: Record<string, string>) =>
      startProgram(
        "mesh-discovery",
        discoveryArgs(discoveryAddresses(), [
          "--registries",
          "Mock",
          "--configDir",
          join(dir, "config"),
          "--log_as_json",
        ]),
        env,
      );
    // The task's --allow-ffi is enough to bind glibc's malloc_trim.
    const server = start({});
    try {
      const [line] = await server.waitFor(/\{[^\n]*"msg":"Native heap trimming on"[^\n]*\}/);
      assert.equal(JSON.parse(line).everyMs, 15_000);
      await server.waitFor(/"msg":"discovery server started"/);
    } finally {
      await server.stop();
    }
    const off = start({ DISCOVERY_NATIVE_HEAP_TRIM_INTERVAL: "0s" });
    try {
      await off.waitFor(/"msg":"discovery server started"/);
      assert.doesNotMatch(off.stdout + off.stderr, /Native heap trimming/);
    } finally {
      await off.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
