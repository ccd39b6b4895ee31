import assert from "node:assert/strict";
import { cat, len, str, vint } from "./_test_bytes.ts";
import { decodeAny, encodeAny, encodeMessage, messageFromObject, messageTypeForUrl } from "./any_codec.ts";
import { loadEnvoySchema } from "./envoy_schema.ts";
import { jsonToStruct, structToJson } from "./struct_json.ts";
import { TYPE_URL } from "./type_urls.ts";

// deno-lint-ignore no-explicit-any -- assertions read decoded trees by path
type Tree = Record<string, any>;

const CLUSTER = {
  name: "outbound|9080||reviews.default.svc.cluster.local",
  type: "EDS",
  eds_cluster_config: { eds_config: { ads: {}, resource_api_version: "V3" }, service_name: "reviews" },
  connect_timeout: { seconds: "10" },
  lb_policy: "LEAST_REQUEST",
  circuit_breakers: {
    thresholds: [{ max_connections: { value: 4294967295 }, max_retries: { value: 1024 } }],
  },
  metadata: { filter_metadata: { mesh: jsonToStruct({ services: [{ host: "reviews", port: 9080 }] }) } },
  transport_socket: {
    name: "envoy.transport_sockets.tls",
    typed_config: {
      "@type": TYPE_URL.upstreamTlsContext,
      sni: "outbound_.9080_._.reviews",
      allow_renegotiation: true,
    },
  },
};

Deno.test("encodeAny writes a google.protobuf.Any that protobufjs reads back", () => {
  const root = loadEnvoySchema();
  const bytes = encodeAny(TYPE_URL.cluster, CLUSTER);
  const any = root.lookupType("google.protobuf.Any").decode(bytes) as unknown as {
    type_url: string;
    value: Uint8Array;
  };
  assert.equal(any.type_url, TYPE_URL.cluster);
  const Cluster = root.lookupType("envoy.config.cluster.v3.Cluster");
  const expected = Cluster.encode(Cluster.fromObject(CLUSTER)).finish();
  assert.deepEqual(new Uint8Array(any.value), new Uint8Array(expected));
  // The Any is exactly type_url = 1 then value = 2, so it can be cached and framed as is.
  assert.deepEqual(new Uint8Array(bytes), cat(str(1, TYPE_URL.cluster), len(2, expected)));
});

Deno.test("decodeAny returns an object that encodeAny turns into the same bytes", async (t) => {
  const bytes = encodeAny(TYPE_URL.cluster, CLUSTER);
  const decoded = decodeAny(bytes);
  await t.step("type URL and readable fields", () => {
    assert.equal(decoded.typeUrl, TYPE_URL.cluster);
    const r = decoded.resource as Tree;
    assert.equal(r.name, CLUSTER.name);
    assert.equal(r.lb_policy, "LEAST_REQUEST");
    assert.deepEqual(r.connect_timeout, { seconds: "10" });
    assert.equal(r.circuit_breakers.thresholds[0].max_connections.value, 4294967295);
    assert.equal(r.transport_socket.typed_config["@type"], TYPE_URL.upstreamTlsContext);
    assert.equal(r.transport_socket.typed_config.sni, "outbound_.9080_._.reviews");
    assert.deepEqual(structToJson(r.metadata.filter_metadata.mesh), {
      services: [{ host: "reviews", port: 9080 }],
    });
  });
  await t.step("round trip", () => {
    assert.deepEqual(new Uint8Array(encodeAny(decoded.typeUrl, decoded.resource)), new Uint8Array(bytes));
  });
});

Deno.test("encodeAny rejects objects that do not fit the schema with a TypeError naming every field path", () => {
  assert.throws(
    () =>
      encodeAny(TYPE_URL.endpoint, {
        cluster_name: "c",
        endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { port_value: -1 } } } }] }],
        policy: { overprovisioning_factor: "x" },
      }),
    {
      name: "TypeError",
      message: "Cannot encode envoy.config.endpoint.v3.ClusterLoadAssignment: " +
        "ClusterLoadAssignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value: " +
        "expected uint32 (an integer in 0..4294967295), got -1; " +
        "ClusterLoadAssignment.policy.overprovisioning_factor: expected an object for message " +
        'google.protobuf.UInt32Value, got "x"',
    },
  );
});

Deno.test("encodeAny rejects a type URL the schema does not have", () => {
  assert.throws(() => encodeAny("type.googleapis.com/envoy.config.cluster.v3.Clusterr", {}), {
    name: "TypeError",
    message:
      'Unknown type URL "type.googleapis.com/envoy.config.cluster.v3.Clusterr": the loaded schema has no ' +
      'message "envoy.config.cluster.v3.Clusterr"; expected "type.googleapis.com/<package>.<Message>" of a loaded ' +
      ".proto file",
  });
  assert.throws(() => encodeAny("", {}), /Unknown type URL ""/);
  // A package name is not a message.
  assert.throws(() => encodeAny("type.googleapis.com/envoy.config.cluster.v3", {}), /Unknown type URL/);
});

Deno.test("encodeAny accepts an already built protobufjs message of the type", () => {
  const Cluster = messageTypeForUrl(TYPE_URL.cluster);
  const message = Cluster.fromObject({ name: "c" });
  assert.deepEqual(
    new Uint8Array(encodeAny(TYPE_URL.cluster, message)),
    new Uint8Array(encodeAny(TYPE_URL.cluster, { name: "c" })),
  );
});

Deno.test("encodeMessage writes the bare message without the Any wrapper", async (t) => {
  await t.step("fields by number", () => {
    const bytes = encodeMessage(TYPE_URL.cluster, { name: "c", type: "EDS" });
    assert.deepEqual(new Uint8Array(bytes), cat(str(1, "c"), vint(2, 3)));
  });
  await t.step(
    "a oneof member holding its default is still written, so the proxy sees which one is set",
    () => {
      const bytes = encodeMessage(TYPE_URL.cluster, { name: "c", type: "STATIC" });
      assert.deepEqual(new Uint8Array(bytes), cat(str(1, "c"), vint(2, 0)));
    },
  );
});

Deno.test("decodeAny rejects malformed bytes and unknown types with a TypeError", async (t) => {
  await t.step("truncated Any", () => {
    const bytes = encodeAny(TYPE_URL.cluster, { name: "c" });
    assert.throws(
      () => decodeAny(bytes.subarray(0, bytes.length - 1)),
      /^TypeError: Malformed google\.protobuf\.Any/,
    );
  });
  await t.step("malformed resource inside a well-formed Any", () => {
    const bytes = cat(str(1, TYPE_URL.cluster), len(2, Uint8Array.of(0x0a, 0x05, 0x61)));
    assert.throws(() => decodeAny(bytes), {
      name: "TypeError",
      message: /^Malformed "type\.googleapis\.com\/envoy\.config\.cluster\.v3\.Cluster" resource in an Any/,
    });
  });
  await t.step("type URL not in the schema", () => {
    assert.throws(
      () => decodeAny(str(1, "type.googleapis.com/x.Y")),
      /^TypeError: Unknown type URL "type\.googleapis\.com\/x\.Y"/,
    );
  });
});

Deno.test("messageFromObject and messageTypeForUrl resolve through a cache per root", () => {
  const a = messageTypeForUrl(TYPE_URL.route);
  assert.equal(messageTypeForUrl(TYPE_URL.route), a);
  assert.equal(a.fullName, ".envoy.config.route.v3.RouteConfiguration");
  const message = messageFromObject(a, { name: "80" }) as unknown as { name: string };
  assert.equal(message.name, "80");
});
