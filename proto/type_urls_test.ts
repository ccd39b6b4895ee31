import assert from "node:assert/strict";
import protobuf from "protobufjs";
import { loadEnvoySchema } from "./envoy_schema.ts";
import { shortTypeName, TYPE_URL, typeNameOf, typeUrlOf } from "./type_urls.ts";

Deno.test("TYPE_URL names a message of the loaded Envoy schema for every entry", () => {
  const root = loadEnvoySchema();
  for (const [key, url] of Object.entries(TYPE_URL)) {
    assert.match(url, /^type\.googleapis\.com\/[a-z0-9_.]+\.[A-Z]\w*$/, key);
    assert.ok(root.lookup(typeNameOf(url)) instanceof protobuf.Type, `${key}: ${url}`);
  }
});

Deno.test("TYPE_URL holds the exact xDS resource type URLs", () => {
  assert.equal(TYPE_URL.cluster, "type.googleapis.com/envoy.config.cluster.v3.Cluster");
  assert.equal(TYPE_URL.endpoint, "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment");
  assert.equal(TYPE_URL.listener, "type.googleapis.com/envoy.config.listener.v3.Listener");
  assert.equal(TYPE_URL.route, "type.googleapis.com/envoy.config.route.v3.RouteConfiguration");
  assert.equal(TYPE_URL.secret, "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret");
});

Deno.test("shortTypeName abbreviates the five xDS types and passes other URLs through", async (t) => {
  await t.step("xDS types", () => {
    assert.equal(shortTypeName(TYPE_URL.cluster), "CDS");
    assert.equal(shortTypeName(TYPE_URL.endpoint), "EDS");
    assert.equal(shortTypeName(TYPE_URL.listener), "LDS");
    assert.equal(shortTypeName(TYPE_URL.route), "RDS");
    assert.equal(shortTypeName(TYPE_URL.secret), "SDS");
  });
  await t.step("anything else", () => {
    assert.equal(shortTypeName(TYPE_URL.router), TYPE_URL.router);
    assert.equal(shortTypeName(""), "");
  });
});

Deno.test("typeNameOf and typeUrlOf convert between type URLs and message names", () => {
  assert.equal(typeNameOf(TYPE_URL.cluster), "envoy.config.cluster.v3.Cluster");
  assert.equal(typeNameOf("example.com/a/b.C"), "b.C");
  assert.equal(typeNameOf("b.C"), "b.C");
  assert.equal(typeUrlOf("envoy.config.cluster.v3.Cluster"), TYPE_URL.cluster);
  assert.equal(typeUrlOf(".envoy.config.cluster.v3.Cluster"), TYPE_URL.cluster);
});
