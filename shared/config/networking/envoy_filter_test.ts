import assert from "node:assert/strict";
import { check } from "./_check.ts";
import { validateEnvoyFilter } from "./envoy_filter.ts";

const ef = (spec: unknown) => check(validateEnvoyFilter, spec);
const lua = {
  name: "envoy.lua",
  typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua" },
};

Deno.test("EnvoyFilter accepts valid patches", async (t) => {
  await t.step("a selector alone", () => {
    assert.deepEqual(ef({ workloadSelector: { labels: { app: "c" } } }).messages, []);
  });

  await t.step("an HTTP filter inserted before the router, a cluster merged, a route removed", () => {
    const r = ef({
      configPatches: [
        {
          applyTo: "HTTP_FILTER",
          match: {
            context: "SIDECAR_INBOUND",
            proxy: { proxyVersion: "^1\\.9.*" },
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
          patch: { operation: "INSERT_BEFORE", value: lua, filterClass: "AUTHZ" },
        },
        {
          applyTo: "CLUSTER",
          match: { cluster: { service: "reviews.default.svc.cluster.local" } },
          patch: { operation: "MERGE", value: { connect_timeout: "1s" } },
        },
        {
          applyTo: "HTTP_ROUTE",
          match: { routeConfiguration: { vhost: { route: { action: "ROUTE" } } } },
          patch: { operation: "REMOVE" },
        },
      ],
    });
    assert.deepEqual(r.messages, []);
    assert.deepEqual(r.warnings, []);
  });
});

Deno.test("EnvoyFilter rejects invalid patches with the field path", async (t) => {
  await t.step("a selector without labels", () => {
    assert.deepEqual(ef({ workloadSelector: { labels: null } }).errors, ["spec.workloadSelector.labels"]);
    assert.deepEqual(ef({ workloadSelector: {} }).errors, ["spec.workloadSelector.labels"]);
  });

  await t.step("missing applyTo, patch, operation or value", () => {
    const r = ef({
      configPatches: [
        { patch: { operation: "MERGE", value: {} } },
        { applyTo: "CLUSTER" },
        { applyTo: "CLUSTER", patch: { value: {} } },
        { applyTo: "LISTENER", patch: { operation: "ADD" } },
        { applyTo: "BOGUS", patch: { operation: "INVALID" } },
      ],
    });
    assert.deepEqual(r.errors, [
      "spec.configPatches[0].applyTo",
      "spec.configPatches[1].patch",
      "spec.configPatches[2].patch.operation",
      "spec.configPatches[3].patch.value",
      "spec.configPatches[4].applyTo",
      "spec.configPatches[4].patch.operation",
    ]);
  });

  await t.step("matches that do not fit applyTo, or name several object types", () => {
    const r = ef({
      configPatches: [
        { applyTo: "HTTP_FILTER", match: { cluster: { name: "c" } }, patch: { operation: "REMOVE" } },
        { applyTo: "CLUSTER", match: { listener: {}, cluster: {} }, patch: { operation: "REMOVE" } },
        { applyTo: "VIRTUAL_HOST", match: { listener: { portNumber: 80 } }, patch: { operation: "REMOVE" } },
      ],
    });
    assert.deepEqual(r.errors, [
      "spec.configPatches[0].match.cluster",
      "spec.configPatches[1].match",
      "spec.configPatches[1].match.listener",
      "spec.configPatches[2].match.listener",
    ]);
  });

  await t.step(
    "filter matches without names, sub-filters outside HTTP_FILTER or the connection manager",
    () => {
      const filterMatch = (applyTo: string, filter: unknown) => ({
        applyTo,
        match: { listener: { filterChain: { filter } } },
        patch: { operation: "REMOVE" },
      });
      const r = ef({
        configPatches: [
          filterMatch("NETWORK_FILTER", {}),
          filterMatch("NETWORK_FILTER", {
            name: "envoy.filters.network.http_connection_manager",
            subFilter: { name: "x" },
          }),
          filterMatch("HTTP_FILTER", { name: "envoy.tcp_proxy", subFilter: {} }),
        ],
      });
      assert.deepEqual(r.errors, [
        "spec.configPatches[0].match.listener.filterChain.filter.name",
        "spec.configPatches[1].match.listener.filterChain.filter.subFilter",
        "spec.configPatches[2].match.listener.filterChain.filter.subFilter",
        "spec.configPatches[2].match.listener.filterChain.filter.subFilter.name",
      ]);
    },
  );

  await t.step("proxy version regex RE2 rejects, unknown context", () => {
    const r = ef({
      configPatches: [{
        applyTo: "CLUSTER",
        match: { context: "SIDECAR", proxy: { proxyVersion: "(?<=1)\\.9" } },
        patch: { operation: "REMOVE" },
      }],
    });
    assert.deepEqual(r.errors, [
      "spec.configPatches[0].match.context",
      "spec.configPatches[0].match.proxy.proxyVersion",
    ]);
  });
});

Deno.test("EnvoyFilter warns about patch settings that have no effect", () => {
  const r = ef({
    configPatches: [{
      applyTo: "CLUSTER",
      patch: { operation: "INSERT_FIRST", value: {}, filterClass: "AUTHN" },
    }],
  });
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.warnings, [
    "spec.configPatches[0].patch.filterClass",
    "spec.configPatches[0].patch.operation",
  ]);
});
