import assert from "node:assert/strict";
import { NETWORKING_GROUP } from "@mesh/shared/config/kinds";
import { parseProxy, type Proxy } from "../../model/proxy.ts";
import { run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar, ingressGateway } from "./_test_envoy.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import { envoyRdsGenerator } from "./envoy_rds.ts";
import { withEnvoyFilters } from "./envoy_filter_generator.ts";
import { EnvoyFilterReports } from "./envoy_filter_reports.ts";
import {
  asList,
  CORS,
  corsEverywhere,
  envoyFilter,
  generate,
  hasCors,
  httpFilterNames,
  type Obj,
} from "./_test_envoy_filter.ts";

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

Deno.test("proxyVersion is an RE2 pattern, as the reference reads it", () => {
  const proxy = (version: string) =>
    parseProxy({
      id: "sidecar~10.0.2.1~app.example~example.svc.cluster.local",
      metadata: { NAMESPACE: "example", INSTANCE_IPS: "10.0.2.1", MESH_VERSION: version },
    });
  const withVersion = (proxyVersion: string) => {
    const filter = structuredClone(STATS_FILTER);
    (filter.spec as unknown as { configPatches: { match: { proxy: { proxyVersion: string } } }[] })
      .configPatches[0]
      .match.proxy
      .proxyVersion = proxyVersion;
    return filter;
  };
  const patched = (proxyVersion: string, version: string) =>
    httpFilterNames(
      generate(envoyLdsGenerator, [withVersion(proxyVersion)], proxy(version)).byName.get("0.0.0.0_8080")!,
    ).includes("istio.stats");
  // RE2's flag group and class syntax, which a JavaScript RegExp refuses.
  assert.equal(patched("(?i)^V1\\.9", "v1.9.9"), true);
  assert.equal(patched("^1\\.\\pN", "1.9"), true);
  assert.equal(patched("(?i)^V1\\.9", "v1.8.0"), false);
  // A proxy names its own version: one past any real version's length matches nothing.
  assert.equal(patched("^1\\.9", "1.9" + "9".repeat(2000)), false);
});

Deno.test("A sidecar's route configuration ignores the gateway and port name of a route match", () => {
  const routes = envoyFilter("example", "routes", {
    configPatches: [{
      applyTo: "ROUTE_CONFIGURATION",
      match: { routeConfiguration: { portNumber: 8080, gateway: "example/shop", portName: "http" } },
      patch: {
        operation: "MERGE",
        value: { request_headers_to_add: [{ header: { key: "x-any", value: "1" } }] },
      },
    }],
  });
  const rds = generate(envoyRdsGenerator, [routes], undefined, undefined, ["8080"]);
  assert.ok(JSON.stringify(rds.byName.get("8080")).includes("x-any"));
});
