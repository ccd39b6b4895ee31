import assert from "node:assert/strict";
import { defaultMeshConfig } from "./mesh_config.ts";
import { MeshConfigError } from "./mesh_config_error.ts";
import { meshConfigToJson } from "./mesh_config_json.ts";
import { parseMeshConfig, parseProxyConfig } from "./parse_mesh_config.ts";
import { defaultProxyConfig } from "./proxy_config.ts";

const SECOND = 1_000_000_000n;

function issuesOf(text: string): string[] {
  try {
    parseMeshConfig(text, "mesh.yaml");
  } catch (error) {
    assert.ok(error instanceof MeshConfigError, String(error));
    return [...error.issues];
  }
  assert.fail(`expected ${JSON.stringify(text)} to be rejected`);
}

Deno.test("defaultMeshConfig has Istio 1.9's defaults with mesh names", () => {
  const mesh = defaultMeshConfig();
  assert.equal(mesh.proxyListenPort, 15001);
  assert.equal(mesh.connectTimeout, 10n * SECOND);
  assert.equal(mesh.protocolDetectionTimeout, 100_000_000n);
  assert.equal(mesh.ingressClass, "mesh");
  assert.equal(mesh.ingressService, "mesh-ingressgateway");
  assert.equal(mesh.ingressControllerMode, "STRICT");
  assert.equal(mesh.enableTracing, true);
  assert.equal(mesh.accessLogEncoding, "TEXT");
  assert.deepEqual(mesh.outboundTrafficPolicy, { mode: "ALLOW_ANY" });
  assert.equal(mesh.enableAutoMtls, true);
  assert.equal(mesh.trustDomain, "cluster.local");
  assert.deepEqual(mesh.defaultServiceExportTo, ["*"]);
  assert.equal(mesh.rootNamespace, "mesh-system");
  assert.equal(mesh.dnsRefreshRate, 5n * SECOND);
  const pc = mesh.defaultConfig;
  assert.equal(pc.configPath, "./etc/mesh/proxy");
  assert.equal(pc.binaryPath, "/usr/local/bin/envoy");
  assert.equal(pc.serviceCluster, "mesh-proxy");
  assert.equal(pc.drainDuration, 45n * SECOND);
  assert.equal(pc.parentShutdownDuration, 60n * SECOND);
  assert.equal(pc.discoveryAddress, "meshd.mesh-system.svc:15012");
  assert.equal(pc.proxyAdminPort, 15000);
  assert.equal(pc.controlPlaneAuthPolicy, "MUTUAL_TLS");
  assert.equal(pc.statNameLength, 189);
  assert.equal(pc.concurrency, 2);
  assert.equal(pc.statusPort, 15020);
  assert.deepEqual(pc.tracing, { zipkin: { address: "zipkin.mesh-system:9411" } });
  assert.equal(pc.terminationDrainDuration, 5n * SECOND);
  assert.equal(pc.holdApplicationUntilProxyStarts, false);
});

Deno.test("parseMeshConfig merges a file over the defaults", async (t) => {
  await t.step("an empty file is the default mesh", () => {
    assert.deepEqual(parseMeshConfig("", "mesh.yaml").config, defaultMeshConfig());
    assert.deepEqual(parseMeshConfig("# comments only\n", "mesh.yaml").config, defaultMeshConfig());
  });

  await t.step("top-level fields replace the defaults one by one; lists and messages as a whole", () => {
    const { config } = parseMeshConfig(
      'accessLogFile: /dev/stdout\nconnectTimeout: 1.5s\ndefaultServiceExportTo: ["."]\n' +
        "outboundTrafficPolicy: {mode: REGISTRY_ONLY}\nlocalityLbSetting: {failover: [{from: a, to: b}]}\n",
      "mesh.yaml",
    );
    assert.equal(config.accessLogFile, "/dev/stdout");
    assert.equal(config.connectTimeout, 1_500_000_000n);
    assert.deepEqual(config.defaultServiceExportTo, ["."]);
    assert.deepEqual(config.defaultVirtualServiceExportTo, ["*"]);
    assert.deepEqual(config.outboundTrafficPolicy, { mode: "REGISTRY_ONLY" });
    assert.deepEqual(config.localityLbSetting, { failover: [{ from: "a", to: "b" }] });
    assert.equal(config.ingressClass, "mesh");
  });

  await t.step("defaultConfig merges field by field, and proxyMetadata entry by entry", () => {
    const base = parseMeshConfig("defaultConfig: {proxyMetadata: {A: a, B: b}}\n", "base.yaml").config;
    const { config } = parseMeshConfig(
      'defaultConfig:\n  drainDuration: 10s\n  proxyMetadata: {B: B2, C: c}\n  tracing: {datadog: {address: "dd:8126"}}\n',
      "mesh.yaml",
      base,
    );
    assert.equal(config.defaultConfig.drainDuration, 10n * SECOND);
    assert.equal(config.defaultConfig.parentShutdownDuration, 60n * SECOND);
    assert.equal(config.defaultConfig.discoveryAddress, "meshd.mesh-system.svc:15012");
    assert.deepEqual(config.defaultConfig.proxyMetadata, { A: "a", B: "B2", C: "c" });
    assert.deepEqual(config.defaultConfig.tracing, { datadog: { address: "dd:8126" } });
  });

  await t.step("proto snake_case field names are accepted", () => {
    const { config } = parseMeshConfig(
      "access_log_file: /tmp/log\ndefault_config: {stat_name_length: 100}\n",
      "m",
    );
    assert.equal(config.accessLogFile, "/tmp/log");
    assert.equal(config.defaultConfig.statNameLength, 100);
  });

  await t.step("the effective config renders as JSON with Go durations", () => {
    const json = JSON.parse(meshConfigToJson(defaultMeshConfig()));
    assert.equal(json.connectTimeout, "10s");
    assert.equal(json.protocolDetectionTimeout, "100ms");
    assert.equal(json.defaultConfig.parentShutdownDuration, "1m0s");
  });
});

Deno.test("parseMeshConfig rejects invalid files with field paths and lines", async (t) => {
  await t.step("unknown fields, at their line", () => {
    const [issue] = issuesOf("enableTracing: true\nproxyListenPrt: 15001\n");
    assert.match(
      issue,
      /^mesh\.yaml:2: proxyListenPrt: unknown field "proxyListenPrt"; expected one of proxyListenPort, /,
    );
    assert.match(
      issuesOf("defaultConfig:\n  tracing:\n    zipkin: {adress: x}\n")[0],
      /^mesh\.yaml:3: defaultConfig\.tracing\.zipkin\.adress: unknown field/,
    );
  });

  await t.step("a JSON access log format that is not a JSON object", () => {
    assert.match(
      issuesOf('accessLogEncoding: JSON\naccessLogFormat: "[%START_TIME%] %RESPONSE_CODE%"\n')[0],
      /accessLogFormat: with accessLogEncoding JSON it must be a JSON object/,
    );
    const text = 'accessLogEncoding: JSON\naccessLogFormat: \'{"code":"%RESPONSE_CODE%"}\'\n';
    assert.equal(parseMeshConfig(text, "m").config.accessLogFormat, '{"code":"%RESPONSE_CODE%"}');
  });

  await t.step("durations", () => {
    assert.match(
      issuesOf("connectTimeout: 10\n")[0],
      /^mesh\.yaml:1: connectTimeout: must be a duration string/,
    );
    assert.match(issuesOf("connectTimeout: 31s\n")[0], /connectTimeout: duration must be at most 30s/);
    assert.match(issuesOf("connectTimeout: 0s\n")[0], /connectTimeout: duration must be at least 1ms/);
    assert.match(issuesOf("dnsRefreshRate: 5x\n")[0], /dnsRefreshRate: invalid duration "5x"/);
    assert.match(
      issuesOf("protocolDetectionTimeout: 1.5ms\n")[0],
      /protocolDetectionTimeout: only durations to ms precision/,
    );
    assert.equal(parseMeshConfig("protocolDetectionTimeout: 0s\n", "m").config.protocolDetectionTimeout, 0n);
  });

  await t.step("drain and parent shutdown durations together", () => {
    assert.match(
      issuesOf("defaultConfig: {drainDuration: 70s}\n")[0],
      /defaultConfig\.parentShutdownDuration: parent shutdown time 60s must be greater than drain time 70s/,
    );
    assert.match(
      issuesOf("defaultConfig: {drainDuration: 1500ms}\n")[0],
      /drain time only supports durations to seconds precision/,
    );
    assert.match(
      issuesOf("defaultConfig: {drainDuration: 2h, parentShutdownDuration: 3h}\n").join("\n"),
      /must be at most 1h/,
    );
  });

  await t.step("ports and addresses", () => {
    assert.match(
      issuesOf("proxyListenPort: 70000\n")[0],
      /^mesh\.yaml:1: proxyListenPort: port number 70000 must be in the range 1\.\.65535/,
    );
    assert.match(
      issuesOf("defaultConfig:\n  statusPort: 0\n")[0],
      /^mesh\.yaml:2: defaultConfig\.statusPort: /,
    );
    assert.match(
      issuesOf("defaultConfig: {discoveryAddress: meshd}\n")[0],
      /discoveryAddress: invalid discovery address: "meshd" must be host:port/,
    );
    assert.match(issuesOf('defaultConfig: {discoveryAddress: ""}\n')[0], /discovery address must be set/);
    assert.match(
      issuesOf('defaultConfig: {tracing: {zipkin: {address: "bad host:9411"}}}\n')[0],
      /invalid zipkin collector address/,
    );
    assert.match(
      issuesOf('defaultConfig: {tracing: {zipkin: {address: "z:1"}, datadog: {address: "d:1"}}}\n')[0],
      /only one of zipkin, lightstep, datadog, stackdriver, openCensusAgent may be set/,
    );
  });

  await t.step("exportTo, trust domains, namespaces and enums", () => {
    assert.match(
      issuesOf('defaultVirtualServiceExportTo: ["~"]\n')[0],
      /defaultVirtualServiceExportTo\[0\]: "~" is only allowed in service entries/,
    );
    assert.equal(
      parseMeshConfig('defaultServiceExportTo: ["~"]\n', "m").config.defaultServiceExportTo[0],
      "~",
    );
    assert.match(issuesOf('defaultDestinationRuleExportTo: ["*", "ns1"]\n')[0], /cannot have both public/);
    assert.match(issuesOf('trustDomain: ""\n')[0], /trustDomain: empty trust domain not allowed/);
    assert.match(
      issuesOf('trustDomainAliases: [ok.example, "bad_domain"]\n')[0],
      /^mesh\.yaml:1: trustDomainAliases\[1\]: trust domain "bad_domain" invalid/,
    );
    assert.match(issuesOf("rootNamespace: Mesh_System\n")[0], /rootNamespace: invalid namespace/);
    assert.match(
      issuesOf("accessLogEncoding: XML\n")[0],
      /accessLogEncoding: invalid value "XML"; expected one of TEXT, JSON/,
    );
    assert.match(issuesOf('serviceSettings: [{hosts: ["a..b"]}]\n')[0], /serviceSettings\[0\]\.hosts\[0\]: /);
  });

  await t.step("types, syntax and document count", () => {
    assert.match(issuesOf('enableTracing: "yes"\n')[0], /enableTracing: must be true or false/);
    assert.match(issuesOf("- a\n")[0], /^mesh\.yaml:1: must be an object, got a list/);
    assert.match(issuesOf("a: [\n")[0], /^mesh\.yaml:\d+:\d+: YAML syntax error: /);
    assert.match(
      issuesOf("enableTracing: true\n---\nenableTracing: false\n")[0],
      /^mesh\.yaml:3: expected a single YAML document/,
    );
  });
});

Deno.test("parseMeshConfig warns about extension providers it would not use", () => {
  const { warnings } = parseMeshConfig(
    'extensionProviders:\n- name: authz\n  envoyExtAuthzHttp: {service: "", port: 8000}\n' +
      "defaultProviders: {tracing: [missing]}\n",
    "mesh.yaml",
  );
  assert.deepEqual(warnings, [
    "mesh.yaml:3: extensionProviders[0].envoyExtAuthzHttp.service: service must not be empty",
    'mesh.yaml:4: defaultProviders.tracing[0]: default provider "missing" is not among extensionProviders',
  ]);
});

Deno.test("parseProxyConfig merges a proxy config over the defaults", () => {
  const { config } = parseProxyConfig(
    "concurrency: 0\nholdApplicationUntilProxyStarts: true\n",
    "PROXY_CONFIG",
  );
  assert.equal(config.concurrency, 0);
  assert.equal(config.holdApplicationUntilProxyStarts, true);
  assert.equal(config.statusPort, defaultProxyConfig().statusPort);
  assert.throws(() => parseProxyConfig("statusPort: -1\n", "PROXY_CONFIG"), /PROXY_CONFIG:1: statusPort: /);
});
