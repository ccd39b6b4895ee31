import assert from "node:assert/strict";
import type { JsonObject } from "@mesh/proto/struct_json";
import { buildProxyNode } from "./proxy_node.ts";
import { resolveProxyConfig } from "./proxy_config.ts";

Deno.test("The pod annotation's tracing settings override the mesh's field by field and reach the node as PROXY_CONFIG", () => {
  const config = resolveProxyConfig({
    meshConfig: {
      text: "defaultConfig:\n  tracing:\n    sampling: 1\n    maxPathTagLength: 64\n",
      source: "mesh",
    },
    env: "",
    annotation: "tracing:\n  sampling: 25\n",
  });
  assert.deepEqual(config.tracing, { sampling: 25, maxPathTagLength: 64 });
  const node = buildProxyNode({
    role: "sidecar",
    podName: "p",
    podNamespace: "n",
    ips: ["10.0.0.1"],
    domain: "n.svc.cluster.local",
    meta: {},
    metaJson: {},
    labels: {},
    serviceCluster: "p.n",
    version: "1",
    proxyConfig: { tracing: config.tracing as JsonObject },
  });
  assert.deepEqual(node.metadata.PROXY_CONFIG, { tracing: { sampling: 25, maxPathTagLength: 64 } });
});

Deno.test("A ProxyConfig without tracing sends no PROXY_CONFIG, and a sampling out of range is refused with its source", () => {
  assert.equal(resolveProxyConfig({ env: "" }).tracing, undefined);
  assert.throws(
    () => resolveProxyConfig({ env: "tracing: {sampling: 150}" }),
    /PROXY_CONFIG: tracing\.sampling is 150; expected a percentage from 0 to 100/,
  );
});

Deno.test("A refused PROXY_CONFIG value is quoted cut short, however long the pod author wrote it", () => {
  const long = "9".repeat(1_000_000);
  assert.throws(
    () => resolveProxyConfig({ env: `drainDuration: "${long}s"` }),
    (error: Error) => {
      assert.match(
        error.message,
        /^PROXY_CONFIG: drainDuration is "9{119}…; expected a duration such as "45s"$/,
      );
      return true;
    },
  );
});
