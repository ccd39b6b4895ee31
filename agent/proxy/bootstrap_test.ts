import assert from "node:assert/strict";
import {
  BootstrapError,
  defaultBootstrap,
  mergeOverride,
  parseOverride,
  validateBootstrap,
} from "./bootstrap.ts";
import { buildProxyNode } from "./proxy_node.ts";
import { parseDownwardApi } from "./downward_api.ts";

const node = buildProxyNode({
  role: "sidecar",
  podName: "ratings-1",
  podNamespace: "shop",
  ips: ["10.1.0.1", "fd00::1"],
  domain: "shop.svc.cluster.local",
  meta: { MESH_META_CLUSTER_ID: "c1" },
  metaJson: { MESH_METAJSON_EXTRA: '{"a":[1,2]}' },
  labels: parseDownwardApi('app="ratings"\nversion="v1"\n').values,
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

Deno.test("PROXY_XDS_VIA_AGENT=false points xds-grpc at the discovery server, over TLS with the SDS certificate", () => {
  const direct = defaultBootstrap({
    ...inputs,
    xds: {
      address: "meshd.mesh-system.svc:15012",
      mutualTls: true,
      rootCertPath: "./var/run/secrets/mesh/root-cert.pem",
      serverName: "meshd.mesh-system.svc",
    },
  });
  validateBootstrap(direct, "the direct bootstrap");
  const clusters = (direct.static_resources as { clusters: Record<string, unknown>[] }).clusters;
  const xds = clusters.find((c) => c.name === "xds-grpc")!;
  assert.equal(xds.type, "STRICT_DNS");
  assert.doesNotMatch(JSON.stringify(xds), /XDS"/, "not the agent's socket");
  assert.match(JSON.stringify(xds), /"address":"meshd\.mesh-system\.svc","port_value":15012/);
  assert.match(JSON.stringify(xds), /"tls_certificate_sds_secret_configs":\[\{"name":"default"/);
  assert.match(JSON.stringify(xds), /"match_subject_alt_names":\[\{"exact":"meshd\.mesh-system\.svc"\}\]/);
  const plaintext = defaultBootstrap({
    ...inputs,
    xds: {
      address: "10.0.0.5:15010",
      mutualTls: false,
      rootCertPath: "",
      serverName: "meshd.mesh-system.svc",
    },
  });
  validateBootstrap(plaintext, "the plaintext bootstrap");
  assert.doesNotMatch(JSON.stringify(plaintext), /transport_socket/);
});

Deno.test("CALL_CREDENTIALS makes ADS a gRPC client of the discovery server with the agent's STS call credentials", () => {
  const bootstrap = defaultBootstrap({
    ...inputs,
    xds: {
      address: "meshd.mesh-system.svc:15012",
      mutualTls: true,
      rootCertPath: "./var/run/secrets/mesh/root-cert.pem",
      serverName: "meshd.mesh-system.svc",
      callCredentials: { stsPort: 15463, tokenPath: "./var/run/secrets/tokens/mesh-token" },
    },
  });
  validateBootstrap(bootstrap, "the call credentials bootstrap");
  const ads = JSON.stringify((bootstrap.dynamic_resources as Record<string, unknown>).ads_config);
  assert.match(ads, /"target_uri":"meshd\.mesh-system\.svc:15012"/);
  assert.match(ads, /"token_exchange_service_uri":"http:\/\/localhost:15463\/token"/);
  assert.match(ads, /"subject_token_path":"\.\/var\/run\/secrets\/tokens\/mesh-token"/);
  const clusters = (bootstrap.static_resources as { clusters: { name: string }[] }).clusters;
  assert.ok(!clusters.some((c) => c.name === "xds-grpc"), "no xds-grpc cluster, as the reference's template");
});
