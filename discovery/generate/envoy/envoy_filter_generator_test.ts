import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "../../../proto/pgv_validate.ts";
import { TYPE_URL } from "../../../proto/type_urls.ts";
import { NETWORKING_GROUP } from "../../../shared/config/kinds.ts";
import type { Resource } from "../../../shared/config/resource.ts";
import type { EnvoyFilterSpec } from "../../../shared/config/networking/envoy_filter.ts";
import { Metrics } from "../../../shared/metrics/metrics.ts";
import { RecordingLogger } from "../../../shared/testing/recording_logger.ts";
import { parseProxy, type Proxy } from "../../model/proxy.ts";
import { type Generated, run, World } from "../_test_world.ts";
import type { XdsGenerator } from "../generator.ts";
import type { PushContext } from "../../push/push_context.ts";
import { envoyResources, envoySidecar, ingressGateway } from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import { envoyRdsGenerator } from "./envoy_rds.ts";
import { withEnvoyFilters } from "./envoy_filter_generator.ts";
import { EnvoyFilterReports } from "./envoy_filter_reports.ts";

type Obj = Record<string, unknown>;

function envoyFilter(namespace: string, name: string, spec: EnvoyFilterSpec): Resource<EnvoyFilterSpec> {
  return {
    gvk: { group: NETWORKING_GROUP, version: "v1alpha3", kind: "EnvoyFilter" },
    meta: { name, namespace },
    spec,
  };
}

const CORS = { name: "envoy.filters.http.cors", typed_config: { "@type": TYPE_URL.cors } };

/** Runs `generator` with EnvoyFilters; every output must pass Envoy's schema and field validation. */
function generate(
  generator: XdsGenerator<PushContext>,
  filters: readonly Resource[],
  proxy: Proxy = envoySidecar("example", "10.0.2.1"),
  reports = new EnvoyFilterReports(),
  names: string[] = [],
): Generated {
  const push = new World().apply(...envoyResources(), ...filters).push();
  const out = run(withEnvoyFilters(generator, reports), proxy, push, { names });
  for (const [name, bytes] of out.bytes) {
    const violations = validatePgvAny(bytes);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
  return out;
}

const asList = (v: unknown) => (v ?? []) as Obj[];

function hcm(listener: Obj): Obj {
  for (const chain of asList(listener.filter_chains)) {
    for (const filter of asList(chain.filters)) {
      if (filter.name === "envoy.filters.network.http_connection_manager") return filter.typed_config as Obj;
    }
  }
  throw new Error(`Listener "${listener.name}" has no HTTP connection manager`);
}

const httpFilterNames = (listener: Obj) => asList(hcm(listener).http_filters).map((f) => f.name);

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
  assert.deepEqual(patched.connect_timeout, { seconds: "7", nanos: 0 });
  assert.equal(patched.type, "EDS");
  const greeter = cds.byName.get("outbound|7070||greeter.example.svc.cluster.local")!;
  assert.notDeepEqual(greeter.connect_timeout, { seconds: "7", nanos: 0 });
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

const corsEverywhere = (
  namespace: string,
  name: string,
  extra: Partial<EnvoyFilterSpec> = {},
  context?: "SIDECAR_INBOUND" | "GATEWAY",
) =>
  envoyFilter(namespace, name, {
    ...extra,
    configPatches: [{
      applyTo: "HTTP_FILTER",
      match: {
        ...(context ? { context } : {}),
        listener: { filterChain: { filter: { subFilter: { name: "envoy.filters.http.router" } } } },
      },
      patch: { operation: "INSERT_BEFORE", value: CORS },
    }],
  });

const hasCors = (lds: Generated, name = "0.0.0.0_8080") =>
  httpFilterNames(lds.byName.get(name)!).includes("envoy.filters.http.cors");

Deno.test("EnvoyFilters select by root namespace, own namespace, workload labels and context", () => {
  assert.ok(
    hasCors(generate(envoyLdsGenerator, [corsEverywhere("mesh-system", "root")])),
    "root applies to all",
  );
  assert.ok(!hasCors(generate(envoyLdsGenerator, [corsEverywhere("other", "foreign")])), "other namespace");
  const selected = corsEverywhere("example", "ratings", { workloadSelector: { labels: { app: "ratings" } } });
  assert.ok(!hasCors(generate(envoyLdsGenerator, [selected])), "labels do not match");
  assert.ok(
    hasCors(generate(envoyLdsGenerator, [selected], envoySidecar("example", "10.0.2.1", { app: "ratings" }))),
  );
  assert.ok(!hasCors(generate(envoyLdsGenerator, [corsEverywhere("example", "in", {}, "SIDECAR_INBOUND")])));
  assert.ok(!hasCors(generate(envoyLdsGenerator, [corsEverywhere("example", "gw", {}, "GATEWAY")])));
});

Deno.test("EnvoyFilters make proxies with different filters differ in shape and cache key", () => {
  const filters = [
    corsEverywhere("example", "ratings", { workloadSelector: { labels: { app: "ratings" } } }),
  ];
  const push = new World().apply(...envoyResources(), ...filters).push();
  const lds = withEnvoyFilters(envoyLdsGenerator, new EnvoyFilterReports());
  const plain = envoySidecar("example", "10.0.2.1", { app: "other" });
  const patched = envoySidecar("example", "10.0.2.2", { app: "ratings" });
  const request = { names: [], full: true };
  assert.notEqual(lds.shapeOf!(plain, push, request), lds.shapeOf!(patched, push, request));
  const key = (proxy: Proxy) => run(lds, proxy, push).cacheable.get("0.0.0.0_8080")!.key.id;
  assert.notEqual(key(plain), key(patched));
  assert.equal(key(plain), run(envoyLdsGenerator, plain, push).cacheable.get("0.0.0.0_8080")!.key.id);
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
    assert.deepEqual(cds.byName.get("PassthroughCluster")!.connect_timeout, { seconds: "3", nanos: 0 });
  }
  assert.equal(logger.lines.filter((l) => l.msg.startsWith("EnvoyFilter patch skipped")).length, 1);
  assert.match(
    await metrics.render(),
    /discovery_envoy_filter_rejected_patches\{envoy_filter="EnvoyFilter\/example\/bad",type="cds"\} 2/,
  );
});

Deno.test("A GATEWAY patch applies to a gateway's listeners and not to sidecars", () => {
  const gateway = [
    {
      gvk: { group: NETWORKING_GROUP, version: "v1beta1", kind: "Gateway" },
      meta: { name: "shop", namespace: "example" },
      spec: {
        selector: { app: "ingress" },
        servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
      },
    },
    corsEverywhere("mesh-system", "gw", {}, "GATEWAY"),
  ];
  const lds = generate(envoyLdsGenerator, gateway, ingressGateway());
  assert.ok(hasCors(lds, "0.0.0.0_80"));
  assert.ok(!hasCors(generate(envoyLdsGenerator, gateway)), "a sidecar is not a gateway");
  const routes = envoyFilter("example", "gw-routes", {
    configPatches: [{
      applyTo: "ROUTE_CONFIGURATION",
      match: { context: "GATEWAY", routeConfiguration: { portNumber: 80 } },
      patch: {
        operation: "MERGE",
        value: { request_headers_to_add: [{ header: { key: "x-gw", value: "1" } }] },
      },
    }],
  });
  const rds = generate(envoyRdsGenerator, [...gateway, routes], ingressGateway(), undefined, ["http.80"]);
  assert.ok(JSON.stringify(rds.byName.get("http.80")).includes("x-gw"));
});

Deno.test("A SIDECAR_INBOUND patch with a port changes the virtualInbound chains of that destination port", () => {
  const lds = generate(envoyLdsGenerator, [
    envoyFilter("example", "inbound", {
      configPatches: [{
        applyTo: "HTTP_FILTER",
        match: {
          context: "SIDECAR_INBOUND",
          listener: {
            portNumber: 9080,
            filterChain: { filter: { subFilter: { name: "envoy.filters.http.router" } } },
          },
        },
        patch: { operation: "INSERT_BEFORE", value: CORS },
      }],
    }),
  ]);
  const chains = asList(lds.byName.get("virtualInbound")!.filter_chains);
  const patched = chains.filter((c) => JSON.stringify(c).includes("envoy.filters.http.cors"));
  assert.ok(patched.length > 0);
  for (const chain of patched) {
    assert.deepEqual((chain.filter_chain_match as Obj).destination_port, { value: 9080 });
  }
  assert.ok(!hasCors(lds), "outbound listeners are another context");
});

/** The reference's telemetry v2 outbound stats filter, as Istio 1.9 installs it (deprecated names, Wasm). */
const STATS_FILTER = envoyFilter("mesh-system", "stats-filter-1.9", {
  configPatches: [{
    applyTo: "HTTP_FILTER",
    match: {
      context: "SIDECAR_OUTBOUND",
      proxy: { proxyVersion: "^1\\.9.*" },
      listener: {
        filterChain: {
          filter: { name: "envoy.http_connection_manager", subFilter: { name: "envoy.router" } },
        },
      },
    },
    patch: {
      operation: "INSERT_BEFORE",
      value: {
        name: "istio.stats",
        typed_config: {
          "@type": "type.googleapis.com/udpa.type.v1.TypedStruct",
          type_url: "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm",
          value: {
            config: {
              root_id: "stats_outbound",
              configuration: { "@type": "type.googleapis.com/google.protobuf.StringValue", value: "{}" },
              vm_config: {
                vm_id: "stats_outbound",
                runtime: "envoy.wasm.runtime.null",
                code: { local: { inline_string: "envoy.wasm.stats" } },
              },
            },
          },
        },
      },
    },
  }],
});

Deno.test("The reference's telemetry v2 stats filter reaches proxies of the version it names", () => {
  const proxy = (version: string) =>
    parseProxy({
      id: "sidecar~10.0.2.1~app.example~example.svc.cluster.local",
      metadata: { NAMESPACE: "example", INSTANCE_IPS: "10.0.2.1", MESH_VERSION: version },
    });
  const names = httpFilterNames(
    generate(envoyLdsGenerator, [STATS_FILTER], proxy("1.9.9")).byName.get("0.0.0.0_8080")!,
  );
  assert.deepEqual(names.slice(-2), ["istio.stats", "envoy.filters.http.router"]);
  const older = httpFilterNames(
    generate(envoyLdsGenerator, [STATS_FILTER], proxy("1.8.2")).byName.get("0.0.0.0_8080")!,
  );
  assert.ok(!older.includes("istio.stats"));
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
