import assert from "node:assert/strict";
import { defaultBootstrap, type Json, validateBootstrap } from "./bootstrap.ts";
import {
  bootstrapTelemetry,
  type BootstrapTelemetryInputs,
  unsupportedTracer,
} from "./bootstrap_telemetry.ts";
import { buildProxyNode } from "./proxy_node.ts";

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
});

function bootstrapWith(inputs: Partial<BootstrapTelemetryInputs>): Json {
  const bootstrap = defaultBootstrap({
    node,
    xdsSocket: "/tmp/x/XDS",
    sdsSocket: "/tmp/x/SDS",
    statusPort: 15020,
    adminPort: 15000,
    statsPort: 15090,
    readinessPort: 15021,
    telemetry: bootstrapTelemetry({
      outlierLogPath: "",
      serviceCluster: "ratings.shop",
      lightstepTokenFile: "/tmp/x/lightstep_access_token.txt",
      ...inputs,
    }),
  });
  validateBootstrap(bootstrap, "bootstrap");
  return bootstrap;
}

const clusterNames = (b: Json) => ((b.static_resources as Json).clusters as Json[]).map((c) => c.name);

Deno.test("A zipkin address in the ProxyConfig gives the proxy a zipkin tracer and the cluster it sends spans to", () => {
  const bootstrap = bootstrapWith({ tracing: { zipkin: { address: "zipkin.mesh-system:9411" } } });
  const http = (bootstrap.tracing as Json).http as Json;
  assert.equal(http.name, "envoy.tracers.zipkin");
  assert.equal((http.typed_config as Json).collector_endpoint, "/api/v2/spans");
  const zipkin = ((bootstrap.static_resources as Json).clusters as Json[]).find((c) => c.name === "zipkin")!;
  assert.deepEqual(
    ((zipkin.load_assignment as Json).endpoints as Json[])[0],
    {
      lb_endpoints: [{
        endpoint: { address: { socket_address: { address: "zipkin.mesh-system", port_value: 9411 } } },
      }],
    },
  );
});

Deno.test("Lightstep and Datadog each give their own tracer, valid by Envoy's schema; the OpenCensus agent is named as left out", () => {
  const lightstep = bootstrapWith({ tracing: { lightstep: { address: "ls:8080", accessToken: "t" } } });
  assert.equal(((lightstep.tracing as Json).http as Json).name, "envoy.tracers.lightstep");
  assert.ok(clusterNames(lightstep).includes("lightstep"));
  const datadog = bootstrapWith({ tracing: { datadog: { address: "dd:8126" } } });
  assert.equal((((datadog.tracing as Json).http as Json).typed_config as Json).service_name, "ratings.shop");
  assert.equal(unsupportedTracer({ openCensusAgent: { address: "dns://oc:55678" } }), "openCensusAgent");
});

Deno.test("Without a tracer address, the access log service or an outlier log path, the bootstrap has none of them", () => {
  const bootstrap = bootstrapWith({ tracing: { sampling: 5 } });
  assert.equal(bootstrap.tracing, undefined);
  assert.equal(bootstrap.cluster_manager, undefined);
  assert.deepEqual(clusterNames(bootstrap), ["xds-grpc", "sds-grpc", "prometheus_stats", "agent"]);
});

Deno.test("envoyAccessLogService and --outlierLogPath add the access log cluster and the outlier event log", () => {
  const bootstrap = bootstrapWith({
    accessLogServiceAddress: "als.mesh-system:9000",
    outlierLogPath: "/dev/stdout",
  });
  assert.ok(clusterNames(bootstrap).includes("envoy_accesslog_service"));
  assert.deepEqual(bootstrap.cluster_manager, { outlier_detection: { event_log_path: "/dev/stdout" } });
});

Deno.test("A tracer address without a port is refused with the tracer's name, and Stackdriver is named as left out", () => {
  assert.throws(
    () => bootstrapWith({ tracing: { zipkin: { address: "zipkin" } } }),
    /zipkin address "zipkin" has no port/,
  );
  assert.equal(unsupportedTracer({ stackdriver: {} }), "stackdriver");
  assert.equal(unsupportedTracer({ zipkin: { address: "z:1" }, stackdriver: {} }), undefined);
});
