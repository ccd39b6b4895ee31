import assert from "node:assert/strict";
import { loadEnvoySchema } from "./envoy_schema.ts";
import { messageTypeForUrl } from "./any_codec.ts";
import { fromProtoJson } from "./proto_json.ts";
import { TYPE_URL } from "./type_urls.ts";

Deno.test("fromProtoJson turns proto3-JSON short forms into the encoder's object forms, by the schema", () => {
  const root = loadEnvoySchema();
  const cluster = fromProtoJson(messageTypeForUrl(TYPE_URL.cluster, root), {
    name: "c",
    connect_timeout: "1.25s",
    respect_dns_ttl: true,
    per_connection_buffer_limit_bytes: 1024,
    circuit_breakers: { thresholds: [{ max_connections: 10 }] },
    metadata: { filter_metadata: { "envoy.lb": { canary: true, zone: "a" } } },
    transport_socket: {
      name: "tls",
      typed_config: { "@type": TYPE_URL.upstreamTlsContext, sni: "x", allow_renegotiation: true },
    },
    commonLbConfig: { healthy_panic_threshold: { value: 0 } },
  }, root) as Record<string, unknown>;
  assert.deepEqual(cluster.connect_timeout, { seconds: "1", nanos: 250_000_000 });
  assert.equal(cluster.respect_dns_ttl, true, "a plain bool field stays");
  assert.deepEqual(cluster.per_connection_buffer_limit_bytes, { value: 1024 }, "a wrapper gets its value");
  assert.deepEqual(
    (cluster.circuit_breakers as { thresholds: Record<string, unknown>[] }).thresholds[0].max_connections,
    { value: 10 },
  );
  const meta = (cluster.metadata as { filter_metadata: Record<string, { fields: Record<string, unknown> }> })
    .filter_metadata["envoy.lb"];
  assert.ok(meta.fields.canary, "a Struct becomes Struct fields");
  assert.deepEqual((cluster.transport_socket as { typed_config: Record<string, unknown> }).typed_config, {
    "@type": TYPE_URL.upstreamTlsContext,
    sni: "x",
    allow_renegotiation: true,
  });
  assert.deepEqual(
    cluster.commonLbConfig,
    { healthy_panic_threshold: { value: 0 } },
    "object forms are kept",
  );
});
