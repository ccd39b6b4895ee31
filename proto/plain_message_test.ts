import assert from "node:assert/strict";
import { encodeMessage } from "./any_codec.ts";
import { loadEnvoySchema } from "./envoy_schema.ts";
import { messageToPlain } from "./plain_message.ts";
import { jsonToStruct } from "./struct_json.ts";
import { TYPE_URL } from "./type_urls.ts";

// deno-lint-ignore no-explicit-any -- assertions read decoded trees by path
type Tree = Record<string, any>;

const root = loadEnvoySchema();

Deno.test("messageToPlain converts a decoded message field by field", async (t) => {
  const Cluster = root.lookupType("envoy.config.cluster.v3.Cluster");
  const bytes = encodeMessage(TYPE_URL.cluster, {
    name: "c",
    type: "STATIC",
    lb_policy: 42,
    connect_timeout: { seconds: "9007199254740993" },
    metadata: { filter_metadata: { mesh: jsonToStruct({ a: [1, { b: null }] }) } },
    load_assignment: { cluster_name: "c", endpoints: [{ lb_endpoints: [{ endpoint: { hostname: "h" } }] }] },
  });
  const plain = messageToPlain(Cluster, Cluster.decode(bytes)) as Tree;
  await t.step("enums become names, unknown enum numbers stay numbers", () => {
    assert.equal(plain.type, "STATIC");
    assert.equal(plain.lb_policy, 42);
    assert.equal(plain.dns_lookup_family, "AUTO");
  });
  await t.step("64-bit integers become exact decimal strings", () => {
    assert.deepEqual(plain.connect_timeout, { seconds: "9007199254740993", nanos: 0 });
  });
  await t.step("Struct fields become plain JSON at any depth", () => {
    assert.deepEqual(plain.metadata.filter_metadata, { mesh: { a: [1, { b: null }] } });
  });
  await t.step("unset messages and oneof members are absent; set oneof members are present", () => {
    assert.equal("outlier_detection" in plain, false);
    assert.equal("cluster_type" in plain, false);
    assert.equal(plain.load_assignment.endpoints[0].lb_endpoints[0].endpoint.hostname, "h");
    assert.equal("health_status" in plain.load_assignment.endpoints[0].lb_endpoints[0], true);
  });
  await t.step("repeated and map fields are always present", () => {
    assert.deepEqual(plain.health_checks, []);
    assert.deepEqual(plain.typed_extension_protocol_options, {});
  });
});

Deno.test("messageToPlain keeps bytes and Any fields as they are", () => {
  const Status = root.lookupType("google.rpc.Status");
  const message = Status.decode(
    Status.encode(
      Status.fromObject({ code: 3, details: [{ type_url: "t/x.Y", value: Uint8Array.of(1, 2) }] }),
    ).finish(),
  );
  const plain = messageToPlain(Status, message) as Tree;
  assert.equal(plain.code, 3);
  assert.equal(plain.message, "");
  assert.equal(plain.details[0].type_url, "t/x.Y");
  assert.deepEqual(new Uint8Array(plain.details[0].value), Uint8Array.of(1, 2));
});
