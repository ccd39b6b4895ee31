import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeGreeterConfig } from "./helpers/greeter_mesh.ts";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";

const SCRIPT = fileURLToPath(new URL("./helpers/leaving_proxies.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../", import.meta.url));

Deno.test(
  "mesh-discovery started by its task collects its heap once after a burst of ADS streams left, and not at 0",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "collection_after_drop_e2e_" });
    try {
      await Deno.mkdir(join(dir, "config"));
      await writeGreeterConfig(join(dir, "config"), { v1: 1, v2: 2 }, 50, 50);
      const addresses = discoveryAddresses();
      const args = discoveryArgs(addresses, [
        "--registries",
        "Mock",
        "--configDir",
        join(dir, "config"),
        "--log_as_json",
      ]);
      const server = startProgram("mesh-discovery", args, { DISCOVERY_COLLECT_AFTER_STREAM_DROP: "4" });
      try {
        await server.waitFor(/"msg":"Collection after a drop on"/);
        await server.waitFor(/"msg":"discovery server started"/);
        // Two connections of four streams each, which receive their config and leave together.
        const proxies = await new Deno.Command("deno", {
          args: [
            "run",
            "--allow-net=127.0.0.1",
            "--allow-env",
            SCRIPT,
            addresses.grpcAddr,
            "halfclose",
            "2",
            "4",
            "0",
          ],
          cwd: ROOT,
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.ok(proxies.success, new TextDecoder().decode(proxies.stderr));
        const [line] = await server.waitFor(
          /\{[^\n]*"msg":"Collected the heap after a drop"[^\n]*\}/,
          60_000,
        );
        const fields = JSON.parse(line);
        assert.equal(fields.from, 8);
        assert.equal(fields.to, 0);
      } finally {
        await server.stop();
      }
      const off = startProgram(
        "mesh-discovery",
        discoveryArgs(discoveryAddresses(), [
          "--registries",
          "Mock",
          "--configDir",
          join(dir, "config"),
          "--log_as_json",
        ]),
        { DISCOVERY_COLLECT_AFTER_STREAM_DROP: "0" },
      );
      try {
        await off.waitFor(/"msg":"discovery server started"/);
        assert.doesNotMatch(off.stdout + off.stderr, /Collection after a drop/);
      } finally {
        await off.stop();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
