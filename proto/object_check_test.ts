import assert from "node:assert/strict";
import { loadEnvoySchema } from "./envoy_schema.ts";
import { checkMessageObject, type SchemaProblem, shortName } from "./object_check.ts";
import { jsonToStruct } from "./struct_json.ts";
import { TYPE_URL } from "./type_urls.ts";

const root = loadEnvoySchema();
const Cluster = root.lookupType("envoy.config.cluster.v3.Cluster");
const Listener = root.lookupType("envoy.config.listener.v3.Listener");

function paths(problems: SchemaProblem[]): string[] {
  return problems.map((p) => p.path);
}

Deno.test("checkMessageObject accepts every form fromObject converts faithfully", () => {
  const problems = checkMessageObject(Cluster, {
    name: "c",
    type: "EDS", // enum by name
    lb_policy: 1, // enum by number
    connect_timeout: { seconds: "10", nanos: 5 }, // int64 as a decimal string
    per_connection_buffer_limit_bytes: { value: 32768 },
    metadata: { filter_metadata: { mesh: jsonToStruct({ a: [1, "b"] }) } },
    dns_lookup_family: undefined,
    outlier_detection: null,
    typed_extension_protocol_options: {
      "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
        "@type": TYPE_URL.httpProtocolOptions,
        explicit_http_config: { http2_protocol_options: {} },
      },
    },
    transport_socket: {
      name: "tls",
      typed_config: { type_url: TYPE_URL.upstreamTlsContext, value: new Uint8Array() },
    },
    cluster_discovery_type: "type", // the virtual oneof name toObject({oneofs: true}) adds
  });
  assert.deepEqual(problems, []);
});

Deno.test("checkMessageObject reports each problem with a full path", async (t) => {
  const check = (object: unknown) => checkMessageObject(Cluster, object);
  await t.step("scalar types and integer ranges", () => {
    assert.deepEqual(check({ name: 1, per_connection_buffer_limit_bytes: { value: -1 } }), [
      { path: "Cluster.name", message: "expected string, got 1" },
      {
        path: "Cluster.per_connection_buffer_limit_bytes.value",
        message: "expected uint32 (an integer in 0..4294967295), got -1",
      },
    ]);
    assert.equal(check({ connect_timeout: { seconds: 2n ** 70n } })[0].message.includes("bigint"), true);
    assert.equal(check({ connect_timeout: { seconds: "1.5" } }).length, 1);
    assert.equal(check({ connect_timeout: { seconds: "99999999999999999999" } }).length, 1);
  });
  await t.step("array indices and map keys", () => {
    const problems = check({
      load_assignment: {
        cluster_name: "c",
        endpoints: [{
          lb_endpoints: [{}, { endpoint: { address: { socket_address: { port_value: "80" } } } }],
        }],
      },
      metadata: { filter_metadata: { mesh: { fields: { k: { string_value: "v" } } } } },
    });
    assert.deepEqual(paths(problems), [
      "Cluster.load_assignment.endpoints[0].lb_endpoints[1].endpoint.address.socket_address.port_value",
      'Cluster.metadata.filter_metadata["mesh"].fields["k"].string_value',
    ]);
    assert.match(problems[1].message, /names it "stringValue" \(build Structs with jsonToStruct\)/);
  });
  await t.step("unknown enum names list the valid ones", () => {
    assert.deepEqual(check({ lb_policy: "ROUND_ROBINN" }), [{
      path: "Cluster.lb_policy",
      message: "expected a value of enum LbPolicy (ROUND_ROBIN, LEAST_REQUEST, RING_HASH, RANDOM, MAGLEV, " +
        'CLUSTER_PROVIDED, LOAD_BALANCING_POLICY_CONFIG), got "ROUND_ROBINN"',
    }]);
  });
  await t.step("unknown and camelCase keys", () => {
    assert.deepEqual(check({ connectTimeout: {}, nmae: "x" }), [
      {
        path: "Cluster.connectTimeout",
        message: "unknown field of envoy.config.cluster.v3.Cluster; the schema keeps the .proto names, use " +
          '"connect_timeout"',
      },
      { path: "Cluster.nmae", message: "unknown field of envoy.config.cluster.v3.Cluster" },
    ]);
  });
  await t.step("two members of one oneof", () => {
    assert.deepEqual(check({ type: "EDS", cluster_type: { name: "x" } }), [{
      path: "Cluster",
      message:
        'oneof "cluster_discovery_type" has more than one field set (type, cluster_type); set at most one',
    }]);
  });
  await t.step("wrong container shapes", () => {
    assert.deepEqual(
      paths(check({ health_checks: {}, metadata: { filter_metadata: [] }, load_assignment: "x" })),
      [
        "Cluster.health_checks",
        "Cluster.metadata.filter_metadata",
        "Cluster.load_assignment",
      ],
    );
    assert.deepEqual(paths(check({ health_checks: [null] })), ["Cluster.health_checks[0]"]);
    assert.deepEqual(check(null), [{
      path: "Cluster",
      message: "expected an object for message envoy.config.cluster.v3.Cluster, got null",
    }]);
  });
});

Deno.test("checkMessageObject looks inside {'@type'} Any objects", () => {
  const problems = checkMessageObject(Listener, {
    name: "l",
    filter_chains: [{
      filters: [{
        name: "hcm",
        typed_config: { "@type": TYPE_URL.httpConnectionManager, stat_prefix: 7, codec_type: "HTTP9" },
      }, {
        name: "x",
        typed_config: { "@type": "type.googleapis.com/no.such.Type" },
      }],
    }],
  });
  assert.deepEqual(problems, [
    {
      path: "Listener.filter_chains[0].filters[0].typed_config(HttpConnectionManager).stat_prefix",
      message: "expected string, got 7",
    },
    {
      path: "Listener.filter_chains[0].filters[0].typed_config(HttpConnectionManager).codec_type",
      message: 'expected a value of enum CodecType (AUTO, HTTP1, HTTP2, HTTP3), got "HTTP9"',
    },
    {
      path: "Listener.filter_chains[0].filters[1].typed_config",
      message: 'type URL "type.googleapis.com/no.such.Type" names no message type in the loaded schema',
    },
  ]);
});

Deno.test("checkMessageObject stops listing after 20 problems and says how many more there were", () => {
  const problems = checkMessageObject(Cluster, { health_checks: Array.from({ length: 25 }, () => 1) });
  assert.equal(problems.length, 21);
  assert.deepEqual(problems[20], { path: "Cluster", message: "5 more problems not shown" });
});

Deno.test("shortName keeps the last component of a full name", () => {
  assert.equal(shortName(".envoy.config.cluster.v3.Cluster"), "Cluster");
  assert.equal(shortName("Cluster"), "Cluster");
});
