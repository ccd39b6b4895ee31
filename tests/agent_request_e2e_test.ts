/**
 * `mesh-agent request` against the stand-in proxy's admin API on its fixed address (127.0.0.1:15000, as the
 * reference's): it prints the body of a 2xx answer, and names the status of any other.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultBootstrap } from "../agent/proxy/bootstrap.ts";
import { buildProxyNode } from "../agent/proxy/proxy_node.ts";
import { runProgram } from "./helpers/programs.ts";
import { waitFor } from "../shared/testing/wait_for.ts";

const ADMIN_PORT = 15000;
const ROOT = fileURLToPath(new URL("../", import.meta.url));

function portFree(port: number): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name: "mesh-agent request reaches the proxy admin API and reports its answers",
  // The request command has no flag for the port; a machine already using 15000 cannot run this test.
  ignore: !portFree(ADMIN_PORT),
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "agent_request_e2e_" });
    const node = buildProxyNode({
      role: "sidecar",
      podName: "app-1",
      podNamespace: "example",
      ips: ["10.9.9.9"],
      domain: "example.svc.cluster.local",
      meta: {},
      metaJson: {},
      labels: {},
      serviceCluster: "mesh-proxy",
      version: "test",
    });
    const bootstrap = defaultBootstrap({
      node,
      xdsSocket: join(dir, "XDS"),
      sdsSocket: join(dir, "SDS"),
      statusPort: 15020,
      adminPort: ADMIN_PORT,
      statsPort: 15090,
      readinessPort: 15021,
    });
    await Deno.writeTextFile(join(dir, "envoy-rev0.json"), JSON.stringify(bootstrap));
    const proxy = new Deno.Command("deno", {
      args: [
        "run",
        "--allow-net",
        "--allow-read",
        "--allow-env",
        "--allow-sys",
        join(ROOT, "tests/helpers/stand_in_proxy.ts"),
        "-c",
        join(dir, "envoy-rev0.json"),
      ],
      cwd: ROOT,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      await waitFor(
        () =>
          fetch(`http://127.0.0.1:${ADMIN_PORT}/ready`).then(
            (r) => r.body?.cancel().then(() => true) ?? true,
            () => false,
          ),
        "the stand-in proxy's admin port answering",
        30_000,
        100,
      );
      await t.step("a 2xx answer's body is printed", async () => {
        const result = await runProgram("mesh-agent", ["request", "GET", "certs"]);
        assert.equal(result.code, 0, result.stderr);
        assert.deepEqual(JSON.parse(result.stdout), {}, "the stand-in holds no secret: it reached no SDS");
      });
      await t.step("another status is named, with the body", async () => {
        const result = await runProgram("mesh-agent", ["request", "GET", "ready"]);
        assert.equal(result.code, 1);
        assert.match(result.stderr, /GET ready returned status 503\nPRE_INITIALIZING/);
      });
      await t.step("POST reaches the admin API too", async () => {
        const result = await runProgram("mesh-agent", [
          "request",
          "POST",
          "drain_listeners?inboundonly&graceful",
        ]);
        assert.equal(result.code, 0, result.stderr);
        assert.equal(result.stdout, "OK\n");
      });
    } finally {
      proxy.kill("SIGTERM");
      await proxy.status;
      await Deno.remove(dir, { recursive: true });
    }
  },
});
