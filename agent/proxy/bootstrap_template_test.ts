import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { loadEnvoySchema } from "../../proto/envoy_schema.ts";
import { validateBootstrap } from "./bootstrap.ts";
import { bootstrapTemplateData, renderBootstrapTemplate } from "./bootstrap_template.ts";
import { TemplateError } from "./go_template.ts";
import { buildProxyNode } from "./proxy_node.ts";

loadEnvoySchema([
  "envoy/extensions/upstreams/http/v3/http_protocol_options.proto",
  "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto",
  "envoy/extensions/filters/http/router/v3/router.proto",
]);

const TEMPLATE = fileURLToPath(
  new URL("../../tests/fixtures/bootstrap/sidecar_bootstrap.json.tmpl", import.meta.url),
);

const node = buildProxyNode({
  role: "sidecar",
  podName: "ratings-1",
  podNamespace: "shop",
  ips: ["10.1.0.1"],
  domain: "shop.svc.cluster.local",
  meta: {},
  metaJson: { MESH_METAJSON_EXTRA: '{"a":[1,2]}' },
  labels: { app: "ratings" },
  serviceCluster: "ratings.shop",
  version: "1.0.0",
});

function data(extra: Record<string, unknown> = {}) {
  return {
    ...bootstrapTemplateData({
      node,
      labels: { app: "ratings" },
      config: { discoveryAddress: "meshd.mesh-system.svc:15012" },
      discoveryAddress: "meshd.mesh-system.svc:15012",
      xdsSocket: "/etc/mesh/proxy/XDS",
      sdsSocket: "/etc/mesh/proxy/SDS",
      adminPort: 15000,
      statsPort: 15090,
      readinessPort: 15021,
      statusPort: 15020,
    }),
    ...extra,
  };
}

Deno.test("A bootstrap template renders with the node, sockets and ports, and passes Envoy's schema", () => {
  const bootstrap = renderBootstrapTemplate(
    TEMPLATE,
    data({ extra_clusters: { prometheus_stats: 15000, agent: 15020 } }),
  );
  validateBootstrap(bootstrap, TEMPLATE);
  const n = bootstrap.node as Record<string, unknown>;
  assert.equal(n.id, node.id);
  assert.deepEqual((n.metadata as Record<string, unknown>).EXTRA, { a: [1, 2] });
  const clusters = (bootstrap.static_resources as { clusters: { name: string }[] }).clusters;
  assert.deepEqual(clusters.map((c) => c.name), ["xds-grpc", "sds-grpc", "agent", "prometheus_stats"]);
  assert.match(JSON.stringify(clusters[0]), /\/etc\/mesh\/proxy\/XDS/);
});

Deno.test("A bootstrap template's problems name the file and line, or say the rendered text is not JSON", async () => {
  assert.throws(
    () => renderBootstrapTemplate("/tmp/mesh-no-such-template", {}),
    /Cannot read --templateFile/,
  );
  const dir = await Deno.makeTempDir({ prefix: "bootstrap_template_" });
  try {
    await Deno.writeTextFile(`${dir}/bad.tmpl`, '{\n  "a": {{ if .x }}1\n}');
    assert.throws(
      () => renderBootstrapTemplate(`${dir}/bad.tmpl`, {}),
      (e: Error) =>
        e instanceof TemplateError && e.message.startsWith(`${dir}/bad.tmpl:2: missing {{ end }}`),
    );
    await Deno.writeTextFile(`${dir}/notjson.tmpl`, '{ "a": {{ .x }} }');
    assert.throws(
      () => renderBootstrapTemplate(`${dir}/notjson.tmpl`, { x: "unquoted" }),
      /rendered text that is not JSON/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
