import assert from "node:assert/strict";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { TYPE_URL } from "@mesh/proto/type_urls";
import {
  encodeDiscoveryRequest,
  readDiscoveryRequest,
  readDiscoveryResponse,
  REQUEST_FIELD,
  rewriteFields,
} from "./discovery_wire.ts";

const schema = loadEnvoySchema();
const Request = schema.lookupType("envoy.service.discovery.v3.DiscoveryRequest");
const Response = schema.lookupType("envoy.service.discovery.v3.DiscoveryResponse");
const encodeRequest = (object: Record<string, unknown>) =>
  Request.encode(Request.fromObject(object)).finish();

Deno.test("readDiscoveryRequest reads what the schema encoded, the node as its own field bytes", () => {
  const bytes = encodeRequest({
    version_info: "v3",
    node: { id: "sidecar~10.0.0.1~a.b~b.svc.cluster.local", cluster: "a" },
    resource_names: ["outbound|80||a.b.svc.cluster.local", "x"],
    type_url: TYPE_URL.cluster,
    response_nonce: "n-1",
    error_detail: { code: 3, message: "bad cluster" },
  });
  const read = readDiscoveryRequest(bytes);
  assert.equal(read.versionInfo, "v3");
  assert.deepEqual(read.resourceNames, ["outbound|80||a.b.svc.cluster.local", "x"]);
  assert.equal(read.typeUrl, TYPE_URL.cluster);
  assert.equal(read.responseNonce, "n-1");
  assert.deepEqual(read.errorDetail, { code: 3, message: "bad cluster" });
  const node = Request.decode(read.node!) as unknown as { node: { id: string; cluster: string } };
  assert.deepEqual({ id: node.node.id, cluster: node.node.cluster }, {
    id: "sidecar~10.0.0.1~a.b~b.svc.cluster.local",
    cluster: "a",
  });
});

Deno.test("readDiscoveryRequest refuses truncated bytes and wrong wire types", () => {
  const bytes = encodeRequest({ type_url: TYPE_URL.cluster, response_nonce: "n" });
  assert.throws(() => readDiscoveryRequest(bytes.subarray(0, bytes.length - 1)), TypeError);
  // type_url (field 4) as a varint.
  assert.throws(() => readDiscoveryRequest(new Uint8Array([0x20, 0x01])), /wire type 0: expected 2/);
  assert.throws(() => readDiscoveryRequest(new Uint8Array([0x0f])), /Wire type 7/);
});

Deno.test("rewriteFields drops nonce and rejection and puts another node in front", () => {
  const original = encodeRequest({
    version_info: "v1",
    node: { id: "old" },
    type_url: TYPE_URL.listener,
    response_nonce: "n",
    error_detail: { message: "no" },
  });
  const node = readDiscoveryRequest(encodeRequest({ node: { id: "new" } })).node!;
  const drop = new Set([REQUEST_FIELD.node, REQUEST_FIELD.responseNonce, REQUEST_FIELD.errorDetail]);
  const rewritten = Request.toObject(Request.decode(rewriteFields(original, drop, node)));
  assert.deepEqual(rewritten, { version_info: "v1", node: { id: "new" }, type_url: TYPE_URL.listener });
});

Deno.test("encodeDiscoveryRequest writes what the schema decodes: an ACK and a NACK", () => {
  const ack = Request.toObject(Request.decode(encodeDiscoveryRequest({
    typeUrl: TYPE_URL.cluster,
    versionInfo: "v2",
    responseNonce: "n-2",
  })));
  assert.deepEqual(ack, { version_info: "v2", type_url: TYPE_URL.cluster, response_nonce: "n-2" });
  const nack = Request.toObject(Request.decode(encodeDiscoveryRequest({
    typeUrl: TYPE_URL.cluster,
    responseNonce: "n-3",
    errorDetail: { code: 3, message: "Invalid name table: é" },
  })));
  assert.deepEqual(nack, {
    type_url: TYPE_URL.cluster,
    response_nonce: "n-3",
    error_detail: { code: 3, message: "Invalid name table: é" },
  });
});

Deno.test("readDiscoveryResponse reads version, type, nonce and each resource's Any", () => {
  const any = { type_url: TYPE_URL.cluster, value: new Uint8Array([0x0a, 0x01, 0x61]) };
  const bytes = Response.encode(Response.fromObject({
    version_info: "v9",
    resources: [any, any],
    type_url: TYPE_URL.cluster,
    nonce: "n-9",
    control_plane: { identifier: "mesh" },
  })).finish();
  const read = readDiscoveryResponse(bytes);
  assert.equal(read.versionInfo, "v9");
  assert.equal(read.typeUrl, TYPE_URL.cluster);
  assert.equal(read.nonce, "n-9");
  assert.equal(read.resources.length, 2);
  const Any = schema.lookupType("google.protobuf.Any");
  assert.equal((Any.decode(read.resources[1]) as unknown as { type_url: string }).type_url, TYPE_URL.cluster);
});
