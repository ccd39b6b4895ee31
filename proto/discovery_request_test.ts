import assert from "node:assert/strict";
import fc from "fast-check";
import protobuf from "protobufjs";
import { cat, dbl, len, str, vint } from "./_test_bytes.ts";
import {
  decodeDeltaDiscoveryRequest,
  decodeDeltaDiscoveryRequestSharingNames,
  decodeDiscoveryRequest,
  decodeDiscoveryRequestSharingNames,
  decodeNameRun,
  splitResourceNames,
} from "./discovery_request.ts";
import { loadEnvoySchema } from "./envoy_schema.ts";
import { TYPE_URL } from "./type_urls.ts";

// Field numbers from envoy/config/core/v3/base.proto (Node, Locality), google/protobuf/struct.proto and
// envoy/service/discovery/v3/discovery.proto. The bytes are what Envoy or a gRPC xDS client puts on the wire.
function structEntry(key: string, value: Uint8Array): Uint8Array {
  return len(1, str(1, key), len(2, value));
}

const NODE = cat(
  str(1, "sidecar~10.1.2.3~reviews-v2-5d8f.default~default.svc.cluster.local"),
  str(2, "reviews.default"),
  len(
    3,
    structEntry("NAMESPACE", str(3, "default")),
    structEntry("LABELS", len(5, structEntry("app", str(3, "reviews")))),
    structEntry("CONCURRENCY", dbl(2, 2)),
    structEntry("SDS", vint(4, 1)),
    structEntry("EXCHANGE_KEYS", len(6, len(1, str(3, "NAME")))),
  ),
  len(4, str(1, "us-east1"), str(2, "us-east1-b")),
  str(6, "envoy"),
  str(7, "1.17.0"),
  str(10, "envoy.lb.does_not_support_overprovisioning"),
  str(10, "envoy.lrs.supports_send_all_clusters"),
);

const EXPECTED_NODE = {
  id: "sidecar~10.1.2.3~reviews-v2-5d8f.default~default.svc.cluster.local",
  cluster: "reviews.default",
  metadata: {
    NAMESPACE: "default",
    LABELS: { app: "reviews" },
    CONCURRENCY: 2,
    SDS: true,
    EXCHANGE_KEYS: ["NAME"],
  },
  locality: { region: "us-east1", zone: "us-east1-b", sub_zone: "" },
  user_agent_name: "envoy",
  user_agent_version: "1.17.0",
  client_features: ["envoy.lb.does_not_support_overprovisioning", "envoy.lrs.supports_send_all_clusters"],
  extensions: [],
  listening_addresses: [],
  dynamic_parameters: {},
};

Deno.test("decodeDiscoveryRequest turns the first request of a stream into a plain object", () => {
  const bytes = cat(
    len(2, NODE),
    str(3, "outbound|80||a.default"),
    str(3, "outbound|80||b.default"),
    str(4, TYPE_URL.endpoint),
  );
  assert.deepEqual(decodeDiscoveryRequest(bytes), {
    version_info: "",
    node: EXPECTED_NODE,
    resource_names: ["outbound|80||a.default", "outbound|80||b.default"],
    resource_locators: [],
    type_url: TYPE_URL.endpoint,
    response_nonce: "",
  });
});

Deno.test("decodeDiscoveryRequest reads a NACK's error detail and leaves out the node when not sent", () => {
  const bytes = cat(
    str(1, "v1"),
    str(4, TYPE_URL.cluster),
    str(5, "nonce-1"),
    len(
      6,
      vint(1, 3),
      str(2, "Proto constraint validation failed (ClusterValidationError.Name: length < 1)"),
    ),
  );
  const request = decodeDiscoveryRequest(bytes);
  assert.equal(request.node, undefined);
  assert.equal(request.version_info, "v1");
  assert.equal(request.response_nonce, "nonce-1");
  assert.deepEqual(request.error_detail, {
    code: 3,
    message: "Proto constraint validation failed (ClusterValidationError.Name: length < 1)",
    details: [],
  });
});

Deno.test("decodeDiscoveryRequest gives a node without metadata an empty metadata object", () => {
  const request = decodeDiscoveryRequest(
    len(2, str(1, "router~10.0.0.1~gw.mesh-system~mesh-system.svc.cluster.local")),
  );
  assert.deepEqual(request.node?.metadata, {});
  assert.equal(request.node?.locality, undefined);
  assert.equal(request.node?.user_agent_version, undefined);
});

Deno.test("decodeDeltaDiscoveryRequest turns a delta request into a plain object", () => {
  const bytes = cat(
    len(1, NODE),
    str(2, TYPE_URL.cluster),
    str(3, "a"),
    str(3, "b"),
    str(4, "c"),
    len(5, str(1, "a"), str(2, "v7")),
    len(5, str(1, "b"), str(2, "v8")),
    str(6, "nonce-9"),
  );
  assert.deepEqual(decodeDeltaDiscoveryRequest(bytes), {
    node: EXPECTED_NODE,
    type_url: TYPE_URL.cluster,
    resource_names_subscribe: ["a", "b"],
    resource_names_unsubscribe: ["c"],
    resource_locators_subscribe: [],
    resource_locators_unsubscribe: [],
    initial_resource_versions: { a: "v7", b: "v8" },
    response_nonce: "nonce-9",
  });
});

Deno.test("decodeDiscoveryRequest rejects malformed bytes with a TypeError", () => {
  assert.throws(() => decodeDiscoveryRequest(Uint8Array.of(0x0a, 0x10, 0x61)), {
    name: "TypeError",
    message: /^Malformed DiscoveryRequest \(3 bytes\): /,
  });
  assert.throws(
    () => decodeDeltaDiscoveryRequest(Uint8Array.of(0x0a, 0xff)),
    /^TypeError: Malformed DeltaDiscoveryRequest/,
  );
});

Deno.test("A request whose names share a list decodes as the full decoder does, names through the caller", async (t) => {
  const root = loadEnvoySchema();
  const names = ["outbound|80||a.ns.svc.cluster.local", "outbound|80||b.ns.svc.cluster.local", "ünïcode"];
  const run = cat(...names.map((n) => str(3, n)));
  const runs: Uint8Array[] = [];
  const listOf = (r: Uint8Array) => {
    runs.push(r.slice());
    return decodeNameRun(r);
  };

  await t.step("names in field order: split out, everything else decoded alike", () => {
    const bytes = cat(str(1, "v1"), len(2, NODE), run, str(4, TYPE_URL.endpoint), str(5, "n-1"));
    assert.deepEqual(
      decodeDiscoveryRequestSharingNames(bytes, root, listOf),
      decodeDiscoveryRequest(bytes, root),
    );
    assert.deepEqual(runs.at(-1), run, "the caller saw the names' bytes");
    assert.deepEqual(
      splitResourceNames(bytes)?.rest,
      cat(str(1, "v1"), len(2, NODE), str(4, TYPE_URL.endpoint), str(5, "n-1")),
    );
  });
  await t.step("names interleaved with other fields: decoded in full, the caller not asked", () => {
    runs.length = 0;
    const bytes = cat(str(3, names[0]), str(4, TYPE_URL.endpoint), str(3, names[1]));
    assert.equal(splitResourceNames(bytes), undefined);
    assert.deepEqual(
      decodeDiscoveryRequestSharingNames(bytes, root, listOf).resource_names,
      names.slice(0, 2),
    );
    assert.equal(runs.length, 0);
  });
  await t.step("no names: decoded in full", () => {
    const bytes = cat(str(4, TYPE_URL.cluster), str(5, "n"));
    assert.deepEqual(
      decodeDiscoveryRequestSharingNames(bytes, root, listOf),
      decodeDiscoveryRequest(bytes, root),
    );
  });
  await t.step("malformed bytes are refused as the full decoder refuses them", () => {
    const truncated = cat(str(4, TYPE_URL.cluster), run).slice(0, -3);
    assert.throws(() => decodeDiscoveryRequestSharingNames(truncated, root, listOf), TypeError);
    const wrongWireType = cat(vint(3, 7), str(4, TYPE_URL.cluster));
    assert.equal(splitResourceNames(wrongWireType), undefined);
  });
});

Deno.test("A delta request's subscribed names share a list the same way; unsubscribed names are decoded", () => {
  const root = loadEnvoySchema();
  const bytes = cat(
    len(1, NODE),
    str(2, TYPE_URL.endpoint),
    str(3, "a"),
    str(3, "b"),
    str(4, "gone"),
    str(6, "n-1"),
  );
  const shared = Object.freeze(["a", "b"]);
  const request = decodeDeltaDiscoveryRequestSharingNames(bytes, root, (run) => {
    assert.deepEqual(decodeNameRun(run), ["a", "b"]);
    return shared;
  });
  assert.equal(request.resource_names_subscribe, shared);
  assert.deepEqual(
    { ...request, resource_names_subscribe: [...shared] },
    decodeDeltaDiscoveryRequest(bytes, root),
  );
});

Deno.test("An ACK decodes as the full decoder decodes it, in any field order, without reading the schema", async (t) => {
  const root = loadEnvoySchema();
  const noSchema = new protobuf.Root();
  const text = fc.string({ unit: "binary", maxLength: 40 });
  // Fields an ACK has (1 version, 3 names, 4 type, 5 nonce), and ones that send it to the full decoder. All
  // with the wire types the schema gives them: protobufjs reads a known field by its schema type whatever the
  // wire says, so on such bytes its result is no oracle (that they leave the ACK path is tested below).
  const field = fc.oneof(
    fc.tuple(fc.constantFrom(1, 3, 4, 5), text).map(([n, v]) => str(n, v)),
    fc.constant(len(2, NODE)),
    fc.constant(len(6, vint(1, 3), str(2, "rejected"))),
    fc.nat().map((v) => vint(9, v)),
  );
  await t.step("every mix of fields gives the full decoder's result", () => {
    fc.assert(
      fc.property(fc.array(field, { maxLength: 12 }), (fields) => {
        const bytes = cat(...fields);
        let expected: unknown;
        try {
          expected = decodeDiscoveryRequest(bytes, root);
        } catch {
          return; // Bytes the full decoder refuses: tested above.
        }
        assert.deepEqual(decodeDiscoveryRequestSharingNames(bytes, root, decodeNameRun), expected);
      }),
      { numRuns: 500 },
    );
  });
  await t.step("a plain ACK needs no schema; any other field or wire type goes to the full decoder", () => {
    const ack = cat(str(1, "v2"), str(3, "a"), str(3, "b"), str(4, TYPE_URL.endpoint), str(5, "n-2"));
    assert.deepEqual(
      decodeDiscoveryRequestSharingNames(ack, noSchema, decodeNameRun),
      decodeDiscoveryRequest(ack, root),
    );
    const wildcard = cat(str(4, TYPE_URL.cluster), str(5, "n-3"));
    assert.deepEqual(
      decodeDiscoveryRequestSharingNames(wildcard, noSchema, decodeNameRun).resource_names,
      [],
    );
    for (const extra of [len(2, NODE), len(6, vint(1, 3)), vint(9, 1), vint(4, 7)]) {
      assert.throws(() => decodeDiscoveryRequestSharingNames(cat(ack, extra), noSchema, decodeNameRun));
    }
  });
  await t.step("names split by another field, or bytes cut short, go to the full decoder", () => {
    const split = cat(str(3, "a"), str(5, "n"), str(3, "b"));
    assert.deepEqual(decodeDiscoveryRequestSharingNames(split, root, decodeNameRun).resource_names, [
      "a",
      "b",
    ]);
    assert.throws(() => decodeDiscoveryRequestSharingNames(split, noSchema, decodeNameRun));
    const cut = cat(str(4, TYPE_URL.cluster), str(5, "nonce")).slice(0, -2);
    assert.throws(() => decodeDiscoveryRequestSharingNames(cut, root, decodeNameRun), TypeError);
  });
});
