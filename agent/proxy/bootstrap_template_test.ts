import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { validateBootstrap } from "./bootstrap.ts";
import { bootstrapTemplateData, renderBootstrapTemplate } from "./bootstrap_template.ts";
import { parseGoTemplate, TemplateError } from "@mesh/shared/template/go_template";
import { DEFAULT_PROXY_CONFIG } from "./proxy_config.ts";
import { buildProxyNode } from "./proxy_node.ts";

const fixture = (name: string) =>
  fileURLToPath(new URL(`../../tests/fixtures/bootstrap/${name}`, import.meta.url));
const TEMPLATE = fixture("sidecar_bootstrap.json.tmpl");
const ISTIO_STYLE_TEMPLATE = fixture("istio_style_bootstrap.json.tmpl");

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
      config: DEFAULT_PROXY_CONFIG,
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

Deno.test("The template data carries Istio's names, so Istio's bootstrap templates read what they expect", () => {
  const render = (template: string, extra: Record<string, unknown> = {}) =>
    parseGoTemplate("istio-names.tmpl", template)(data(extra));
  assert.equal(
    render("{{ .config.ConfigPath }} {{ .config.ProxyAdminPort }} {{ .config.StatusPort }}"),
    "./etc/mesh/proxy 15000 15020",
  );
  assert.equal(
    render("{{ .config.DrainDuration }} {{ .config.ParentShutdownDuration }} {{ .config.ServiceCluster }}"),
    "45s 1m0s ratings.shop",
    "durations as Go prints them; the service cluster from --serviceCluster",
  );
  assert.equal(
    render("{{ if eq .config.ControlPlaneAuthPolicy 1 }}mutual TLS{{ end }}"),
    "mutual TLS",
    "Istio's enum number",
  );
  assert.equal(render("{{ .config.proxyAdminPort }}"), "15000", "our names stay beside Istio's");
  assert.equal(
    render("{{ .nodeType }} {{ .envoy_prometheus_port }} {{ .envoy_status_port }} {{ .xds_type }}"),
    "sidecar 15090 15021 GRPC",
  );
  assert.equal(render("{{ if .proxy_via_agent }}{{ .runtime_flags }}{{ end }}"), "{}");
  assert.equal(
    render("{{ if or .zipkin .region .sts_port }}set{{ else }}unset{{ end }}"),
    "unset",
    "options Istio leaves out when unset are left out",
  );
});

Deno.test("An Istio-style template renders and passes Envoy's schema with its options unset and set", async (t) => {
  await t.step("unset: no locality, no extra stats, no tracer cluster", () => {
    const bootstrap = renderBootstrapTemplate(ISTIO_STYLE_TEMPLATE, data());
    validateBootstrap(bootstrap, ISTIO_STYLE_TEMPLATE);
    const n = bootstrap.node as Record<string, unknown>;
    assert.equal(n.id, node.id);
    assert.deepEqual(n.locality, {});
    const clusters = (bootstrap.static_resources as { clusters: { name: string }[] }).clusters;
    assert.deepEqual(clusters.map((c) => c.name), ["prometheus_stats", "agent", "sds-grpc", "xds-grpc"]);
    assert.match(JSON.stringify(clusters[3]), /"\.\/etc\/mesh\/proxy\/XDS"/);
    assert.match(JSON.stringify(clusters[2]), /"\/etc\/mesh\/proxy\/SDS"/);
  });
  await t.step(
    "set: locality joined by commas, ranges over stats options, the first tracer of the chain",
    () => {
      const bootstrap = renderBootstrapTemplate(
        ISTIO_STYLE_TEMPLATE,
        data({
          region: "eu",
          zone: "eu-1",
          extraStatTags: ["app"],
          inclusionPrefix: ["cluster_manager"],
          inclusionRegexps: ['.*"quoted".*'],
          zipkin: '{"address":"zipkin.mesh-system","port_value":9411}',
          datadog: '{"address":"never.used","port_value":8126}',
        }),
      );
      validateBootstrap(bootstrap, ISTIO_STYLE_TEMPLATE);
      assert.deepEqual((bootstrap.node as Record<string, unknown>).locality, { region: "eu", zone: "eu-1" });
      const stats = JSON.stringify(bootstrap.stats_config);
      assert.match(stats, /"tag_name":"app"/);
      assert.match(stats, /"prefix":"cluster_manager"/);
      assert.match(stats, /"regex":".\*\\"quoted\\".\*"/, "js escaped the quotes, so the JSON held");
      const clusters = (bootstrap.static_resources as { clusters: { name: string }[] }).clusters;
      assert.deepEqual(clusters.map((c) => c.name).slice(4), ["zipkin"]);
    },
  );
});
