import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import { envoyRdsGenerator } from "./envoy_rds.ts";
import { EnvoyFilterReports } from "./envoy_filter_reports.ts";
import { asList, CORS, envoyFilter, generate, hcm, httpFilterNames, type Obj } from "./_test_envoy_filter.ts";

Deno.test("An HTTP_FILTER INSERT_BEFORE puts the filter right before the router of the matched listener", () => {
  const lds = generate(envoyLdsGenerator, [
    envoyFilter("example", "cors", {
      configPatches: [{
        applyTo: "HTTP_FILTER",
        match: {
          context: "SIDECAR_OUTBOUND",
          listener: {
            portNumber: 8080,
            filterChain: {
              filter: {
                name: "envoy.filters.network.http_connection_manager",
                subFilter: { name: "envoy.filters.http.router" },
              },
            },
          },
        },
        patch: { operation: "INSERT_BEFORE", value: CORS },
      }],
    }),
  ]);
  const names = httpFilterNames(lds.byName.get("0.0.0.0_8080")!);
  assert.deepEqual(names.slice(-2), ["envoy.filters.http.cors", "envoy.filters.http.router"]);
  const other = [...lds.byName.entries()].filter(([n]) => n !== "0.0.0.0_8080");
  for (const [, listener] of other) assert.ok(!JSON.stringify(listener).includes("envoy.filters.http.cors"));
  assert.ok(lds.cacheable.get("0.0.0.0_8080")!.key.dependsOn.includes("EnvoyFilter/example/cors"));
});

Deno.test("A NETWORK_FILTER MERGE on the HTTP connection manager merges fields and keeps its filters", () => {
  const lds = generate(envoyLdsGenerator, [
    envoyFilter("mesh-system", "hcm", {
      configPatches: [{
        applyTo: "NETWORK_FILTER",
        match: {
          listener: { filterChain: { filter: { name: "envoy.filters.network.http_connection_manager" } } },
        },
        patch: {
          operation: "MERGE",
          value: {
            typed_config: {
              "@type": TYPE_URL.httpConnectionManager,
              server_name: "meshy",
              streamIdleTimeout: "30s",
              http_filters: [CORS],
            },
          },
        },
      }],
    }),
  ]);
  const manager = hcm(lds.byName.get("0.0.0.0_8080")!);
  assert.equal(manager.server_name, "meshy");
  assert.deepEqual(manager.stream_idle_timeout, { seconds: "30", nanos: 0 });
  const names = asList(manager.http_filters).map((f) => f.name);
  // Repeated fields append, as protobuf's merge: the router stays and the patch's filter follows.
  assert.ok(names.includes("envoy.filters.http.router"));
  assert.equal(names.at(-1), "envoy.filters.http.cors");
});

Deno.test("A CLUSTER MERGE matched by service and port changes that cluster only", () => {
  const cds = generate(envoyCdsGenerator, [
    envoyFilter("example", "timeout", {
      configPatches: [{
        applyTo: "CLUSTER",
        match: {
          context: "SIDECAR_OUTBOUND",
          cluster: { service: "ratings.example.svc.cluster.local", portNumber: 8080 },
        },
        patch: { operation: "MERGE", value: { connectTimeout: "7s" } },
      }],
    }),
  ]);
  const patched = cds.byName.get("outbound|8080||ratings.example.svc.cluster.local")!;
  assert.deepEqual(patched.connect_timeout, { seconds: "7" });
  assert.equal(patched.type, "EDS");
  const greeter = cds.byName.get("outbound|7070||greeter.example.svc.cluster.local")!;
  assert.notDeepEqual(greeter.connect_timeout, { seconds: "7" });
});

Deno.test("A LISTENER ADD adds a listener; CLUSTER and HTTP_FILTER REMOVE drop what they match", () => {
  const filters = [
    envoyFilter("example", "edit", {
      configPatches: [
        {
          applyTo: "LISTENER",
          patch: {
            operation: "ADD",
            value: {
              name: "extra",
              address: { socket_address: { address: "0.0.0.0", port_value: 9999 } },
              filter_chains: [{
                filters: [{
                  name: "envoy.filters.network.tcp_proxy",
                  typed_config: {
                    "@type": TYPE_URL.tcpProxy,
                    stat_prefix: "extra",
                    cluster: "BlackHoleCluster",
                  },
                }],
              }],
            },
          },
        },
        {
          applyTo: "HTTP_FILTER",
          match: {
            listener: { filterChain: { filter: { subFilter: { name: "envoy.filters.http.fault" } } } },
          },
          patch: { operation: "REMOVE" },
        },
        {
          applyTo: "CLUSTER",
          match: { cluster: { name: "BlackHoleCluster" } },
          patch: { operation: "REMOVE" },
        },
      ],
    }),
  ];
  const lds = generate(envoyLdsGenerator, filters);
  assert.ok(lds.byName.has("extra"));
  assert.ok(!httpFilterNames(lds.byName.get("0.0.0.0_8080")!).includes("envoy.filters.http.fault"));
  const cds = generate(envoyCdsGenerator, filters);
  assert.ok(!cds.byName.has("BlackHoleCluster"));
  assert.ok(cds.byName.has("PassthroughCluster"));
});

Deno.test("ROUTE_CONFIGURATION and VIRTUAL_HOST MERGE change the matched route configuration", () => {
  const rds = generate(
    envoyRdsGenerator,
    [
      envoyFilter("example", "routes", {
        configPatches: [
          {
            applyTo: "ROUTE_CONFIGURATION",
            match: { routeConfiguration: { portNumber: 8080 } },
            patch: {
              operation: "MERGE",
              value: { request_headers_to_add: [{ header: { key: "x-patched", value: "yes" } }] },
            },
          },
          {
            applyTo: "VIRTUAL_HOST",
            match: {
              routeConfiguration: { name: "8080", vhost: { name: "ratings.example.svc.cluster.local:8080" } },
            },
            patch: { operation: "MERGE", value: { include_request_attempt_count: true } },
          },
        ],
      }),
    ],
    undefined,
    undefined,
    ["8080"],
  );
  const config = rds.byName.get("8080")!;
  const headers = asList(config.request_headers_to_add).map((h) => (h.header as Obj).key);
  assert.ok(headers.includes("x-patched"));
  const hosts = asList(config.virtual_hosts);
  const ratings = hosts.find((h) => h.name === "ratings.example.svc.cluster.local:8080")!;
  assert.equal(ratings.include_request_attempt_count, true);
  for (const host of hosts.filter((h) => h !== ratings)) {
    assert.notEqual(host.include_request_attempt_count, true);
  }
});

Deno.test("A patch that makes a cluster invalid is skipped, counted and logged once", async () => {
  const metrics = new Metrics("discovery", { version: "1.0.0", tag: "1.0.0" });
  const logger = new RecordingLogger();
  const reports = new EnvoyFilterReports(metrics, logger);
  const filters = [
    envoyFilter("example", "bad", {
      configPatches: [
        {
          applyTo: "CLUSTER",
          match: { cluster: { name: "PassthroughCluster" } },
          patch: { operation: "MERGE", value: { connect_timeout: "-1s" } },
        },
        {
          applyTo: "CLUSTER",
          match: { cluster: { name: "PassthroughCluster" } },
          patch: { operation: "MERGE", value: { connect_timeout: "3s" } },
        },
      ],
    }),
  ];
  for (let i = 0; i < 2; i++) {
    const cds = generate(envoyCdsGenerator, filters, undefined, reports);
    assert.deepEqual(cds.byName.get("PassthroughCluster")!.connect_timeout, { seconds: "3" });
  }
  assert.equal(logger.lines.filter((l) => l.msg.startsWith("EnvoyFilter patch skipped")).length, 1);
  assert.match(
    await metrics.render(),
    /discovery_envoy_filter_rejected_patches\{envoy_filter="EnvoyFilter\/example\/bad",type="cds"\} 2/,
  );
});

Deno.test("SIDECAR_INBOUND route patches change the route configurations inline in virtualInbound", () => {
  const lds = generate(envoyLdsGenerator, [
    envoyFilter("example", "inbound-routes", {
      configPatches: [{
        applyTo: "HTTP_ROUTE",
        match: {
          context: "SIDECAR_INBOUND",
          routeConfiguration: { portNumber: 9080, vhost: { route: { name: "default" } } },
        },
        patch: { operation: "MERGE", value: { route: { timeout: "15s" } } },
      }],
    }),
  ]);
  const text = JSON.stringify(lds.byName.get("virtualInbound"));
  assert.match(text, /"timeout":\{"seconds":"15"/);
  assert.ok(!JSON.stringify(lds.byName.get("0.0.0.0_8080")).includes('"seconds":"15"'));
});

Deno.test("A LISTENER ADD of an invalid listener adds nothing and is counted", async () => {
  const metrics = new Metrics("discovery", { version: "1.0.0", tag: "1.0.0" });
  const reports = new EnvoyFilterReports(metrics, new RecordingLogger());
  const lds = generate(
    envoyLdsGenerator,
    [
      envoyFilter("example", "bad-add", {
        configPatches: [{
          applyTo: "LISTENER",
          // Ports end at 65535.
          patch: {
            operation: "ADD",
            value: {
              name: "bad-port",
              address: { socket_address: { address: "0.0.0.0", port_value: 70000 } },
            },
          },
        }],
      }),
    ],
    undefined,
    reports,
  );
  assert.ok(!lds.byName.has("bad-port"));
  assert.ok(lds.byName.has("virtualOutbound"));
  assert.match(
    await metrics.render(),
    /discovery_envoy_filter_rejected_patches\{envoy_filter="EnvoyFilter\/example\/bad-add",type="lds"\} 1/,
  );
});
