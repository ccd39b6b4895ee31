import assert from "node:assert/strict";
import {
  BootstrapError,
  defaultBootstrap,
  mergeOverride,
  parseOverride,
  validateBootstrap,
} from "./bootstrap.ts";
import { buildProxyNode, parseLabelsFile } from "./proxy_node.ts";

const node = buildProxyNode({
  role: "sidecar",
  podName: "ratings-1",
  podNamespace: "shop",
  ips: ["10.1.0.1", "fd00::1"],
  domain: "shop.svc.cluster.local",
  meta: { MESH_META_CLUSTER_ID: "c1" },
  metaJson: { MESH_METAJSON_EXTRA: '{"a":[1,2]}' },
  labels: parseLabelsFile('app="ratings"\nversion="v1"\n'),
  serviceCluster: "ratings.shop",
  version: "1.0.0",
});
const inputs = {
  node,
  xdsSocket: "/tmp/x/XDS",
  sdsSocket: "/tmp/x/SDS",
  statusPort: 15020,
  adminPort: 15000,
  statsPort: 15090,
  readinessPort: 15021,
};

Deno.test("The node names the role, address, pod and namespace, with metadata from MESH_META_* and MESH_METAJSON_*", () => {
  assert.equal(node.id, "sidecar~10.1.0.1~ratings-1.shop~shop.svc.cluster.local");
  assert.equal(node.metadata.CLUSTER_ID, "c1");
  assert.deepEqual(node.metadata.EXTRA, { a: [1, 2] });
  assert.deepEqual(node.metadata.LABELS, { app: "ratings", version: "v1" });
  assert.equal(node.metadata.INSTANCE_IPS, "10.1.0.1,fd00::1");
  assert.throws(
    () => buildProxyNode({ ...inputsOf(), metaJson: { MESH_METAJSON_X: "{" } }),
    /MESH_METAJSON_X is not JSON/,
  );
});

function inputsOf() {
  return {
    role: "sidecar" as const,
    podName: "p",
    podNamespace: "n",
    ips: ["10.0.0.1"],
    domain: "cluster.local",
    meta: {},
    metaJson: {},
    labels: {},
    serviceCluster: "c",
    version: "v",
  };
}

Deno.test("The default bootstrap passes Envoy's Bootstrap schema and validation rules", () => {
  validateBootstrap(defaultBootstrap(inputs), "the default bootstrap");
});

Deno.test("MESH_BOOTSTRAP_OVERRIDE merges over the default, and a bad one is refused naming the file", () => {
  const merged = mergeOverride(
    defaultBootstrap(inputs),
    parseOverride("admin:\n  address:\n    socket_address:\n      port_value: 16000\n", "override.yaml"),
  ) as Record<string, unknown>;
  validateBootstrap(merged, "merged");
  assert.match(JSON.stringify(merged.admin), /16000/);
  assert.match(JSON.stringify(merged.admin), /127\.0\.0\.1/, "the rest of admin stays");
  const broken = mergeOverride(defaultBootstrap(inputs), {
    admin: { address: { socket_address: { port_value: "x" } } },
  });
  assert.throws(
    () => validateBootstrap(broken as Record<string, unknown>, "override.yaml"),
    (e) => e instanceof BootstrapError && /override\.yaml/.test(e.message),
  );
  assert.throws(() => parseOverride("[1, 2]", "override.yaml"), /override\.yaml must hold an object/);
});
