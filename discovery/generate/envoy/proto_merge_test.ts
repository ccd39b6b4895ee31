import assert from "node:assert/strict";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { mergeInto, patchObject } from "./proto_merge.ts";

const root = loadEnvoySchema();
const cluster = root.lookupType("envoy.config.cluster.v3.Cluster");
const filter = root.lookupType("envoy.config.listener.v3.Filter");

Deno.test("mergeInto appends repeated fields, merges messages and replaces scalars", () => {
  const base = { name: "c", connect_timeout: { seconds: "1", nanos: 0 }, health_checks: [{ timeout: {} }] };
  const merged = mergeInto(
    cluster,
    base,
    { name: "d", connect_timeout: { nanos: 5 }, health_checks: [{}] },
    root,
  );
  assert.equal(merged.name, "d");
  assert.deepEqual(merged.connect_timeout, { seconds: "1", nanos: 5 });
  assert.equal((merged.health_checks as unknown[]).length, 2);
  assert.equal(base.name, "c", "the base is left as it was");
});

Deno.test("mergeInto clears the other members of a oneof it sets", () => {
  const merged = mergeInto(cluster, { type: "EDS" }, { cluster_type: { name: "custom" } }, root);
  assert.deepEqual(Object.keys(merged), ["cluster_type"]);
});

Deno.test("mergeInto merges an Any of the same type and replaces one of another", () => {
  const base = { name: "f", typed_config: { "@type": TYPE_URL.tcpProxy, stat_prefix: "s", cluster: "x" } };
  const same = mergeInto(filter, base, { typed_config: { "@type": TYPE_URL.tcpProxy, cluster: "y" } }, root);
  assert.deepEqual(same.typed_config, { "@type": TYPE_URL.tcpProxy, stat_prefix: "s", cluster: "y" });
  const other = mergeInto(filter, base, { typed_config: { "@type": TYPE_URL.router } }, root);
  assert.deepEqual(other.typed_config, { "@type": TYPE_URL.router });
});

Deno.test("patchObject reads proto3 JSON: camelCase names, durations and wrappers", () => {
  const value = patchObject(cluster, { connectTimeout: "2.5s", perConnectionBufferLimitBytes: 10 }, root);
  assert.deepEqual(value, {
    connect_timeout: { seconds: "2", nanos: 500_000_000 },
    per_connection_buffer_limit_bytes: { value: 10 },
  });
});

Deno.test("mergeInto leaves a field alone where the patch holds a proto3 default, as protobuf's merge", () => {
  const base = { name: "c", connect_timeout: { seconds: "1", nanos: 500 }, type: "EDS" };
  const merged = mergeInto(cluster, base, { name: "", connect_timeout: { seconds: "2", nanos: 0 } }, root);
  assert.equal(merged.name, "c");
  assert.deepEqual(merged.connect_timeout, { seconds: "2", nanos: 500 });
  const hcm = root.lookupType(
    "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
  );
  const kept = mergeInto(hcm, { use_remote_address: { value: true } }, {
    use_remote_address: { value: false },
  }, root);
  assert.deepEqual(kept.use_remote_address, { value: true });
});
