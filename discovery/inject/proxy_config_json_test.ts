import assert from "node:assert/strict";
import { podProxyConfig } from "./proxy_config_json.ts";

Deno.test("A pod's proxy.mesh.io/config replaces fields of the mesh default and merges its proxyMetadata", () => {
  const mesh = { concurrency: 2, proxyMetadata: { A: "mesh", B: "mesh" } };
  assert.deepEqual(podProxyConfig(mesh, "concurrency: 4\nproxyMetadata:\n  B: pod\n  C: pod\n"), {
    concurrency: 4,
    proxyMetadata: { A: "mesh", B: "pod", C: "pod" },
  });
  assert.deepEqual(podProxyConfig(mesh, "concurrency: 4"), {
    concurrency: 4,
    proxyMetadata: mesh.proxyMetadata,
  });
});
