import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import protobuf from "protobufjs";
import {
  ENVOY_DEPS_FOLDERS,
  ENVOY_PROTO_FILES,
  findProtoIncludePaths,
  loadEnvoySchema,
  loadProtoFiles,
} from "./envoy_schema.ts";

Deno.test("findProtoIncludePaths finds the @grpc/grpc-js-xds deps folders and protobufjs's descriptor.proto", () => {
  const paths = findProtoIncludePaths();
  for (const folder of ENVOY_DEPS_FOLDERS) assert.ok(existsSync(join(paths.depsDir, folder)), folder);
  assert.ok(existsSync(join(paths.depsDir, "envoy-api", "envoy", "service", "discovery", "v3", "ads.proto")));
  assert.ok(existsSync(join(paths.protobufjsDir, "google", "protobuf", "descriptor.proto")));
});

Deno.test("loadEnvoySchema loads every type the control plane needs", async (t) => {
  const root = loadEnvoySchema();
  const names = [
    "envoy.service.discovery.v3.AggregatedDiscoveryService",
    "envoy.service.secret.v3.SecretDiscoveryService",
  ];
  await t.step("the discovery services", () => {
    for (const name of names) assert.ok(root.lookupService(name), name);
    const ads = root.lookupService(names[0]);
    assert.deepEqual(Object.keys(ads.methods).sort(), [
      "DeltaAggregatedResources",
      "StreamAggregatedResources",
    ]);
  });
  await t.step("the resource, filter, TLS, bootstrap, admin and status messages", () => {
    for (
      const name of [
        "envoy.service.discovery.v3.DiscoveryRequest",
        "envoy.service.discovery.v3.DeltaDiscoveryResponse",
        "envoy.config.cluster.v3.Cluster",
        "envoy.config.endpoint.v3.ClusterLoadAssignment",
        "envoy.config.listener.v3.Listener",
        "envoy.config.route.v3.RouteConfiguration",
        "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
        "envoy.extensions.filters.http.router.v3.Router",
        "envoy.extensions.filters.http.fault.v3.HTTPFault",
        "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
        "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
        "envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext",
        "envoy.extensions.transport_sockets.tls.v3.Secret",
        "envoy.config.bootstrap.v3.Bootstrap",
        "envoy.admin.v3.ConfigDump",
        "google.rpc.Status",
        "validate.FieldRules",
      ]
    ) {
      assert.ok(root.lookupType(name), name);
    }
  });
  await t.step("field names keep the .proto spelling (keepCase)", () => {
    const cluster = root.lookupType("envoy.config.cluster.v3.Cluster");
    assert.ok(cluster.fields.connect_timeout);
    assert.equal(cluster.fields.connectTimeout, undefined);
  });
  await t.step(
    "google.protobuf.Value comes from protobufjs's bundle and is camelCase despite keepCase",
    () => {
      const value = root.lookupType("google.protobuf.Value");
      assert.deepEqual(Object.keys(value.fields).sort(), [
        "boolValue",
        "listValue",
        "nullValue",
        "numberValue",
        "stringValue",
        "structValue",
      ]);
      assert.equal(root.lookupType("google.protobuf.Any").fields.type_url.id, 1);
    },
  );
});

Deno.test("loadEnvoySchema loads once and reuses the same root", () => {
  assert.equal(loadEnvoySchema(), loadEnvoySchema());
});

Deno.test("loadProtoFiles names the file it cannot find", () => {
  assert.throws(
    () => loadProtoFiles(["envoy/does/not/exist.proto"]),
    (error: Error) => {
      assert.match(
        error.message,
        /^Cannot load the protobuf schema from ".*envoy-api".*envoy\/does\/not\/exist\.proto/,
      );
      assert.ok(error.cause instanceof Error);
      return true;
    },
  );
});

Deno.test("loadProtoFiles loads into a fresh root independent of the shared one", () => {
  const root = loadProtoFiles(["envoy/config/core/v3/address.proto"]);
  assert.ok(root instanceof protobuf.Root);
  assert.notEqual(root, loadEnvoySchema());
  assert.ok(root.lookupType("envoy.config.core.v3.SocketAddress"));
  assert.equal(root.lookup("envoy.config.cluster.v3.Cluster"), null);
});

Deno.test("ENVOY_PROTO_FILES lists only files that exist", () => {
  const { depsDir } = findProtoIncludePaths();
  for (const file of ENVOY_PROTO_FILES) {
    assert.ok(ENVOY_DEPS_FOLDERS.some((folder) => existsSync(join(depsDir, folder, file))), file);
  }
});
