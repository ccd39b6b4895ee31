import assert from "node:assert/strict";
import { encodeAny } from "./any_codec.ts";
import { loadEnvoySchema } from "./envoy_schema.ts";
import {
  assertPgvValid,
  formatPgvViolations,
  type PgvViolation,
  validatePgv,
  validatePgvAny,
} from "./pgv_validate.ts";
import { jsonToStruct } from "./struct_json.ts";
import { TYPE_URL } from "./type_urls.ts";

function lines(violations: PgvViolation[]): string[] {
  return violations.map((v) => `${v.path}: ${v.message}`);
}

const EDS_CLUSTER = {
  name: "outbound|9080||reviews.default.svc.cluster.local",
  type: "EDS",
  eds_cluster_config: { eds_config: { ads: {}, resource_api_version: "V3" }, service_name: "reviews" },
  connect_timeout: { seconds: 10 },
  lb_policy: "ROUND_ROBIN",
  circuit_breakers: {
    thresholds: [{ max_connections: { value: 4294967295 }, max_retries: { value: 4294967295 } }],
  },
  metadata: {
    filter_metadata: { mesh: jsonToStruct({ services: [{ host: "reviews", namespace: "default" }] }) },
  },
  transport_socket: {
    name: "envoy.transport_sockets.tls",
    typed_config: {
      "@type": TYPE_URL.upstreamTlsContext,
      sni: "outbound_.9080_._.reviews.default.svc.cluster.local",
      common_tls_context: {
        alpn_protocols: ["mesh-peer-exchange", "mesh"],
        tls_certificate_sds_secret_configs: [{
          name: "default",
          sds_config: { ads: {}, resource_api_version: "V3" },
        }],
        combined_validation_context: {
          default_validation_context: {
            match_subject_alt_names: [{ exact: "spiffe://cluster.local/ns/default/sa/reviews" }],
          },
          validation_context_sds_secret_config: {
            name: "ROOTCA",
            sds_config: { ads: {}, resource_api_version: "V3" },
          },
        },
      },
    },
  },
};

const STATIC_CLUSTER = {
  name: "inbound|9080||",
  type: "STATIC",
  connect_timeout: { nanos: 250_000_000 },
  load_assignment: {
    cluster_name: "inbound|9080||",
    endpoints: [{
      locality: { region: "us-east1" },
      load_balancing_weight: { value: 1 },
      lb_endpoints: [{
        endpoint: { address: { socket_address: { address: "127.0.0.1", port_value: 9080 } } },
        health_status: "HEALTHY",
        load_balancing_weight: { value: 3 },
      }],
    }],
  },
};

const ROUTE_CONFIGURATION = {
  name: "9080",
  virtual_hosts: [{
    name: "reviews.default.svc.cluster.local:9080",
    domains: ["reviews.default.svc.cluster.local", "reviews", "reviews:9080", "10.0.0.12"],
    routes: [{
      name: "default",
      match: { prefix: "/" },
      route: {
        cluster: "outbound|9080||reviews.default.svc.cluster.local",
        timeout: { seconds: 0 },
        retry_policy: { retry_on: "connect-failure,refused-stream", num_retries: { value: 2 } },
      },
      request_headers_to_add: [{
        header: { key: "x-mesh", value: "1" },
        append_action: "OVERWRITE_IF_EXISTS_OR_ADD",
      }],
    }, {
      match: {
        safe_regex: { regex: "/api/v[0-9]+/.*" },
        headers: [{ name: ":method", string_match: { exact: "GET" } }],
      },
      direct_response: { status: 404 },
    }],
  }],
  validate_clusters: { value: false },
};

const HTTP_LISTENER = {
  name: "0.0.0.0_9080",
  address: { socket_address: { address: "0.0.0.0", port_value: 9080 } },
  traffic_direction: "OUTBOUND",
  filter_chains: [{
    filters: [{
      name: "envoy.filters.network.http_connection_manager",
      typed_config: {
        "@type": TYPE_URL.httpConnectionManager,
        stat_prefix: "outbound_0.0.0.0_9080",
        rds: { route_config_name: "9080", config_source: { ads: {}, resource_api_version: "V3" } },
        http_filters: [
          { name: "envoy.filters.http.fault", typed_config: { "@type": TYPE_URL.fault } },
          { name: "envoy.filters.http.router", typed_config: { "@type": TYPE_URL.router } },
        ],
      },
    }],
  }],
  listener_filters: [{
    name: "envoy.filters.listener.tls_inspector",
    typed_config: { "@type": TYPE_URL.tlsInspector },
  }],
};

const TCP_LISTENER = {
  name: "10.0.0.12_27017",
  address: { socket_address: { address: "10.0.0.12", port_value: 27017 } },
  filter_chains: [{
    filters: [{
      name: "envoy.filters.network.tcp_proxy",
      typed_config: {
        "@type": TYPE_URL.tcpProxy,
        stat_prefix: "outbound|27017||mongo",
        cluster: "outbound|27017||mongo",
      },
    }],
  }],
};

const SECRET = {
  name: "default",
  tls_certificate: {
    certificate_chain: { inline_bytes: new TextEncoder().encode("-----BEGIN CERTIFICATE-----\n") },
    private_key: { inline_bytes: new TextEncoder().encode("-----BEGIN PRIVATE KEY-----\n") },
  },
};

Deno.test("validatePgv accepts realistic resources of every xDS type", async (t) => {
  const cases: [string, string, Record<string, unknown>][] = [
    ["an EDS cluster with mTLS and metadata", TYPE_URL.cluster, EDS_CLUSTER],
    ["a static cluster with an inline load assignment", TYPE_URL.cluster, STATIC_CLUSTER],
    ["a load assignment", TYPE_URL.endpoint, STATIC_CLUSTER.load_assignment],
    ["a route configuration", TYPE_URL.route, ROUTE_CONFIGURATION],
    ["an HTTP listener", TYPE_URL.listener, HTTP_LISTENER],
    ["a TCP listener", TYPE_URL.listener, TCP_LISTENER],
    ["a secret", TYPE_URL.secret, SECRET],
  ];
  for (const [name, typeUrl, resource] of cases) {
    await t.step(name, () => {
      assert.deepEqual(lines(validatePgv(typeUrl, resource)), []);
      assert.deepEqual(lines(validatePgvAny(encodeAny(typeUrl, resource))), []);
    });
  }
});

Deno.test("validatePgv rejects invalid clusters with the path of each broken rule", () => {
  const cluster = {
    ...STATIC_CLUSTER,
    name: "",
    connect_timeout: { seconds: 0 },
    lb_policy: 99,
    dns_refresh_rate: { nanos: 1 },
    load_assignment: {
      cluster_name: "x",
      endpoints: [{
        load_balancing_weight: { value: 0 },
        priority: 200,
        lb_endpoints: [{ endpoint: { address: { socket_address: { address: "", port_value: 70000 } } } }],
      }],
    },
    health_checks: [{ no_traffic_interval: { seconds: 1 } }],
    transport_socket: {
      name: "tls",
      typed_config: { "@type": TYPE_URL.upstreamTlsContext, sni: "a".repeat(256) },
    },
  };
  assert.deepEqual(lines(validatePgv(TYPE_URL.cluster, cluster)), [
    'Cluster.name: must be at least 1 character (got "")',
    "Cluster.connect_timeout: must be > 0s (got 0s)",
    "Cluster.lb_policy: must be a defined value of enum LbPolicy (got 99)",
    "Cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address: " +
    'must be at least 1 character (got "")',
    "Cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value: " +
    "must be <= 65535 (got 70000)",
    "Cluster.load_assignment.endpoints[0].load_balancing_weight: must be >= 1 (got 0)",
    "Cluster.load_assignment.endpoints[0].priority: must be <= 128 (got 200)",
    'Cluster.health_checks[0].health_checker: one of "http_health_check", "tcp_health_check", ' +
    '"grpc_health_check", "custom_health_check" must be set',
    "Cluster.health_checks[0].timeout: is required",
    "Cluster.health_checks[0].interval: is required",
    "Cluster.health_checks[0].unhealthy_threshold: is required",
    "Cluster.health_checks[0].healthy_threshold: is required",
    "Cluster.dns_refresh_rate: must be > 0.001s (got 0.000000001s)",
    "Cluster.transport_socket.typed_config(UpstreamTlsContext).sni: must be at most 255 bytes " +
    `(got "${"a".repeat(256)}")`,
  ]);
});

Deno.test("validatePgv rejects invalid route configurations", () => {
  const route = {
    name: "9080",
    virtual_hosts: [{
      name: "",
      domains: [],
      routes: [
        { match: {}, route: { cluster: "" } },
        { match: { prefix: "/" } },
        {
          match: { path: "/x" },
          route: { cluster: "c" },
          request_headers_to_add: [{ header: { key: "x-bad\nname", value: "v" } }],
          response_headers_to_remove: ["ok", "bad\r"],
        },
      ],
    }],
  };
  assert.deepEqual(lines(validatePgv(TYPE_URL.route, route)), [
    'RouteConfiguration.virtual_hosts[0].name: must be at least 1 character (got "")',
    "RouteConfiguration.virtual_hosts[0].domains: must have at least 1 item (got 0)",
    'RouteConfiguration.virtual_hosts[0].routes[0].match.path_specifier: one of "prefix", "path", "safe_regex", ' +
    '"connect_matcher", "path_separated_prefix", "path_match_policy" must be set',
    'RouteConfiguration.virtual_hosts[0].routes[0].route.cluster: must be at least 1 character (got "")',
    'RouteConfiguration.virtual_hosts[0].routes[1].action: one of "route", "redirect", "direct_response", ' +
    '"filter_action", "non_forwarding_action" must be set',
    "RouteConfiguration.virtual_hosts[0].routes[2].request_headers_to_add[0].header.key: must be a valid HTTP " +
    'header name (no NUL, CR or LF) (got "x-bad\\nname")',
    "RouteConfiguration.virtual_hosts[0].routes[2].response_headers_to_remove[1]: must be a valid HTTP header " +
    'name (no NUL, CR or LF) (got "bad\\r")',
  ]);
});

Deno.test("validatePgv rejects invalid listeners, looking inside typed_config", () => {
  const listener = {
    name: "l",
    address: { socket_address: { address: "0.0.0.0", port_value: 70000 } },
    filter_chains: [{
      filters: [
        { name: "", typed_config: { "@type": TYPE_URL.tcpProxy, stat_prefix: "" } },
        {
          name: "hcm",
          typed_config: {
            "@type": TYPE_URL.httpConnectionManager,
            stat_prefix: "s",
            codec_type: 9,
            http_filters: [{ name: "", typed_config: { "@type": TYPE_URL.router } }],
          },
        },
      ],
    }],
  };
  assert.deepEqual(lines(validatePgv(TYPE_URL.listener, listener)), [
    "Listener.address.socket_address.port_value: must be <= 65535 (got 70000)",
    'Listener.filter_chains[0].filters[0].name: must be at least 1 character (got "")',
    'Listener.filter_chains[0].filters[0].typed_config(TcpProxy).cluster_specifier: one of "cluster", ' +
    '"weighted_clusters" must be set',
    'Listener.filter_chains[0].filters[0].typed_config(TcpProxy).stat_prefix: must be at least 1 character (got "")',
    'Listener.filter_chains[0].filters[1].typed_config(HttpConnectionManager).route_specifier: one of "rds", ' +
    '"route_config", "scoped_routes" must be set',
    "Listener.filter_chains[0].filters[1].typed_config(HttpConnectionManager).codec_type: must be a defined value " +
    "of enum CodecType (got 9)",
    "Listener.filter_chains[0].filters[1].typed_config(HttpConnectionManager).http_filters[0].name: must be at " +
    'least 1 character (got "")',
  ]);
});

Deno.test("validatePgv reports Any types missing from the schema unless told to skip them", () => {
  const listener = {
    ...TCP_LISTENER,
    filter_chains: [{
      filters: [{
        name: "istio.stats",
        typed_config: { type_url: "type.googleapis.com/udpa.type.v1.Nope", value: new Uint8Array() },
      }],
    }],
  };
  assert.deepEqual(lines(validatePgv(TYPE_URL.listener, listener)), [
    'Listener.filter_chains[0].filters[0].typed_config: has type URL "type.googleapis.com/udpa.type.v1.Nope", ' +
    "which names no message in the loaded schema",
  ]);
  assert.deepEqual(validatePgv(TYPE_URL.listener, listener, { requireKnownAnyTypes: false }), []);
});

Deno.test("validatePgv rejects a secret whose data source sets nothing", () => {
  assert.deepEqual(
    lines(validatePgv(TYPE_URL.secret, { name: "default", tls_certificate: { certificate_chain: {} } })),
    [
      'Secret.tls_certificate.certificate_chain.specifier: one of "filename", "inline_bytes", "inline_string", ' +
      '"environment_variable" must be set',
    ],
  );
});

Deno.test("validatePgv takes bytes, protobufjs messages, plain objects and full type names alike", () => {
  const cluster = { name: "", type: "STATIC", connect_timeout: { seconds: 1 } };
  const expected = ['Cluster.name: must be at least 1 character (got "")'];
  const Cluster = loadEnvoySchema().lookupType("envoy.config.cluster.v3.Cluster");
  assert.deepEqual(lines(validatePgv(TYPE_URL.cluster, cluster)), expected);
  assert.deepEqual(lines(validatePgv("envoy.config.cluster.v3.Cluster", cluster)), expected);
  assert.deepEqual(
    lines(validatePgv(TYPE_URL.cluster, Cluster.encode(Cluster.fromObject(cluster)).finish())),
    expected,
  );
  assert.deepEqual(lines(validatePgv(TYPE_URL.cluster, Cluster.fromObject(cluster))), expected);
});

Deno.test("validatePgv reports objects that do not fit the schema instead of guessing", () => {
  assert.deepEqual(lines(validatePgv(TYPE_URL.cluster, { name: "c", conect_timeout: { seconds: 1 } })), [
    "Cluster.conect_timeout: does not fit the schema: unknown field of envoy.config.cluster.v3.Cluster",
  ]);
  assert.deepEqual(lines(validatePgv(TYPE_URL.cluster, Uint8Array.of(0x0a, 0x09))), [
    "Cluster: is not a valid encoding: index out of range: 2 + 9 > 2",
  ]);
});

Deno.test("assertPgvValid throws a TypeError listing every violation", () => {
  assertPgvValid(TYPE_URL.route, ROUTE_CONFIGURATION);
  assert.throws(() => assertPgvValid(TYPE_URL.cluster, { name: "", connect_timeout: { seconds: 1 } }), {
    name: "TypeError",
    message: 'Resource "envoy.config.cluster.v3.Cluster" breaks 1 validation rules:\n' +
      'Cluster.name: must be at least 1 character (got "")',
  });
});

Deno.test("formatPgvViolations renders one violation per line", () => {
  assert.equal(
    formatPgvViolations([{ path: "A.b", message: "must be > 0 (got 0)" }, {
      path: "A.c",
      message: "is required",
    }]),
    "A.b: must be > 0 (got 0)\nA.c: is required",
  );
});
